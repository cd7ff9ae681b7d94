package prober

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober/transport"
	"github.com/llmprobe/llmprobe/quality"
)

// readWhole reads an answer that came in one body: E2E, to the end of its
// JSON value, is its one latency, and TTFT, ITL and TPOT stay unset (n/a). An answer
// of tokens (stream: false) is kept as a stream's is, for the quality
// check and a conversation's next turn; an embeddings or rerank answer
// has no output token at all. complete says its JSON value was read whole.
func (c *Client) readWhole(ctx context.Context, body io.Reader, h http.Header, r Request, res *Result) (complete bool) {
	keep := answerKeep(r)
	w, err := c.api.whole(body, h, r, keep+answerMargin, c.dialect())
	res.E2E = time.Since(r.Sched)
	if res.failAnswer(ctx, err) {
		return false
	}
	if !c.api.traits().tokens {
		res.pooled(w)
		return true
	}
	res.Answer, res.answerLimit, res.FinishReason = w.Content+w.Refusal, keep, truncate(w.FinishReason, 32)
	res.ResponseModel = w.Model
	res.ending = endingOf(res.FinishReason, w.Refusal != "")
	for _, tc := range w.ToolCalls {
		res.ToolCalls = append(res.ToolCalls, quality.ToolCall(tc))
	}
	(&streamState{}).engineTimings(&streamChunk{Metrics: w.Metrics, Timings: w.Timings}, res)
	u := w.usage
	switch {
	case u != nil:
		res.OutputTokens, res.TokenSource, res.PromptTokensReported = u.CompletionTokens, TokensFromUsage, u.PromptTokens
		res.CachedPromptTokens, res.CachedReported = u.Cached()
		res.Note("usage: prompt_tokens=%d completion_tokens=%d", u.PromptTokens, u.CompletionTokens)
	case w.TextTokens > 0:
		res.OutputTokens, res.TokenSource = w.TextTokens, TokensFromText
		res.Note("no usage from the server: about %d output tokens estimated from the answer's text", w.TextTokens)
	}
	if u != nil && u.Reasoning() > 0 {
		n := u.Reasoning()
		res.ReasoningTokens, res.AnswerTokens, res.ReasoningSource = n, max(res.OutputTokens-n, 0), TokensFromUsage
	} else if w.ReasoningTextTokens > 0 {
		res.ReasoningTokens, res.AnswerTokens, res.ReasoningSource = w.ReasoningTextTokens, max(w.TextTokens-w.ReasoningTextTokens, 0), TokensFromText
	}
	switch {
	case res.ending == reasonEngineAbort:
		res.failAbort()
	case w.Content == "" && w.Refusal == "" && w.Reasoning == "" && len(w.ToolCalls) == 0:
		res.fail(OutcomeStreamError, phaseStream, reasonNoOutput, fmt.Sprintf("the answer has no content, reasoning or tool call (finish_reason %q)", res.FinishReason))
	case u != nil && r.MaxTokens > 0 && u.CompletionTokens > r.MaxTokens:
		res.TokenMismatch = TokenMismatchAboveMax
		res.fail(OutcomeStreamError, phaseStream, reasonMaxTokens, fmt.Sprintf("usage reports %d completion tokens for max_tokens %d", u.CompletionTokens, r.MaxTokens))
	default:
		res.Outcome = OutcomeSuccess
		res.logEnding()
	}
	return true
}

// imagesAsked is the log's word on a request's images, with the body's size.
func imagesAsked(s config.Scenario, body int64) string {
	if im := s.Images; im != nil {
		return fmt.Sprintf(", %d images of %dx%d px (body %s)", im.Count, im.Width, im.Height, config.Bytes(body))
	}
	return ""
}

// pooled takes an embeddings or rerank answer that passed its checks.
func (res *Result) pooled(a *answer) {
	if a.Dimension > 0 {
		res.Note("%d vectors of %d dimensions", a.Inputs, a.Dimension)
	} else {
		res.Note("%d documents ranked", a.Inputs)
	}
	res.Outcome = OutcomeSuccess
	res.Inputs, res.Dimension, res.PromptTokensReported = a.Inputs, a.Dimension, a.InputTokens
}

// failAnswer fails res for err, an answer read in one body that failed its
// checks (an *AnswerProblem with its reason) or its reading; it reports
// whether there was an error.
func (res *Result) failAnswer(ctx context.Context, err error) bool {
	var p *answerProblem
	switch {
	case err == nil:
		return false
	case errors.As(err, &p):
		res.fail(OutcomeStreamError, phaseStream, p.Reason, p.Text)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.fail(OutcomeTimeout, phaseStream, transport.ReasonDeadline, fmt.Sprintf("deadline after %s: %v", res.E2E.Round(time.Millisecond), err))
	case ctx.Err() != nil:
		res.fail(OutcomeCancelled, phaseStream, transport.ReasonCancelled, err.Error())
	default:
		res.fail(OutcomeStreamError, phaseStream, reasonStreamCut, err.Error())
	}
	return true
}
