package prober

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/quality"
)

// readWhole reads an unstreamed answer (stream: false): E2E, to the body's
// end, is its one latency; no token arrived apart, so TTFT, ITL and TPOT
// stay unset (n/a). Its answer is kept as a stream's is, for the quality
// check and a conversation's next turn.
func (c *Client) readWhole(ctx context.Context, body io.Reader, r Request, res *Result) {
	keep := answerKeep(r)
	w, err := ReadWhole(c.target.API, body, WholeLimit(r.MaxTokens), keep+answerMargin)
	res.E2E = time.Since(r.Sched)
	if res.failAnswer(ctx, err) {
		return
	}
	res.Answer, res.answerLimit, res.FinishReason = w.Content, keep, Truncate(w.FinishReason, 32)
	for _, tc := range w.ToolCalls {
		res.ToolCalls = append(res.ToolCalls, quality.ToolCall(tc))
	}
	(&streamState{}).engineTimings(&Chunk{Metrics: w.Metrics, Timings: w.Timings}, res)
	u := w.Usage
	switch {
	case u != nil:
		res.OutputTokens, res.TokenSource, res.PromptTokensReported = u.CompletionTokens, TokensFromUsage, u.PromptTokens
		res.CachedPromptTokens, res.CachedReported = u.Cached()
		res.logf("usage: prompt_tokens=%d completion_tokens=%d", u.PromptTokens, u.CompletionTokens)
	case w.TextTokens > 0:
		res.OutputTokens, res.TokenSource = w.TextTokens, TokensFromText
		res.logf("no usage from the server: about %d output tokens estimated from the answer's text", w.TextTokens)
	}
	if u != nil && u.Reasoning() > 0 {
		n := u.Reasoning()
		res.ReasoningTokens, res.AnswerTokens, res.ReasoningSource = n, max(res.OutputTokens-n, 0), TokensFromUsage
	} else if w.ReasoningTextTokens > 0 {
		res.ReasoningTokens, res.AnswerTokens, res.ReasoningSource = w.ReasoningTextTokens, max(w.TextTokens-w.ReasoningTextTokens, 0), TokensFromText
	}
	switch {
	case w.Content == "" && w.Reasoning == "" && len(w.ToolCalls) == 0:
		res.fail(OutcomeStreamError, phaseStream, reasonNoOutput, fmt.Sprintf("the answer has no content, reasoning or tool call (finish_reason %q)", res.FinishReason))
	case u != nil && r.MaxTokens > 0 && u.CompletionTokens > r.MaxTokens:
		res.fail(OutcomeStreamError, phaseStream, reasonMaxTokens, fmt.Sprintf("usage reports %d completion tokens for max_tokens %d", u.CompletionTokens, r.MaxTokens))
	default:
		res.Outcome = OutcomeSuccess
	}
}

// imagesAsked is the log's word on a request's images, with the body's size.
func imagesAsked(s config.Scenario, body int64) string {
	if im := s.Images; im != nil {
		return fmt.Sprintf(", %d images of %dx%d px (body %s)", im.Count, im.Width, im.Height, config.Bytes(body))
	}
	return ""
}
