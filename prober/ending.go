package prober

import (
	"fmt"
	"strings"
)

// The ending rule, one for every API: an answer the engine aborted is a
// failure; one its content filter ended, or a refusal, arrived (a success)
// but answered nothing the prompt asked (not good, with its quality
// reason).
const (
	reasonEngineAbort = "engine_abort"

	endingContentFilter = "content_filter"
	endingRefusal       = "refusal"
)

// endingOf is the ending of an answer whose finish reason is finish (as
// the result keeps it: a Responses API answer's is "incomplete (reason)")
// and that carried a refusal or not: "" for an answer, else abort, a
// content filter or a refusal.
func endingOf(finish string, refused bool) string {
	switch strings.ToLower(finish) {
	case "abort":
		return reasonEngineAbort
	case "content_filter", "incomplete (content_filter)":
		return endingContentFilter
	case "refusal": // the Messages API's stop reason
		return endingRefusal
	}
	if refused {
		return endingRefusal
	}
	return ""
}

// failAbort fails res as an answer the engine aborted.
func (res *Result) failAbort() {
	res.fail(OutcomeStreamError, phaseStream, reasonEngineAbort, fmt.Sprintf("the engine aborted the request (finish_reason %q) after %d output tokens", res.FinishReason, res.OutputTokens))
}

// logEnding says in res's log why a successful answer is no answer.
func (res *Result) logEnding() {
	switch res.ending {
	case endingContentFilter:
		res.Note("the engine's content filter ended the answer (finish_reason %q): not good", res.FinishReason)
	case endingRefusal:
		res.Note("the model refused: a refusal is no answer, not good")
	}
}

// endingQuality is the quality result of an answer that ended as no
// answer, nil for one that is an answer.
func endingQuality(ending string) *QualityResult {
	switch ending {
	case endingContentFilter:
		return &QualityResult{Reason: "ended by the engine's content filter"}
	case endingRefusal:
		return &QualityResult{Reason: "the model refused"}
	}
	return nil
}
