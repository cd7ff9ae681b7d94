package prober

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/lib/sse"
	"github.com/llmprobe/llmprobe/prober/transport"
)

// streamState is what readStream tracks between chunks.
type streamState struct {
	chunkAt     []time.Duration // arrival of each output chunk, from t_sched
	chunkTokens []int           // tokens per output chunk from running usage, when the engine sends it
	exactCounts bool
	lastUsage   usage
	answer      strings.Builder
	answerLimit int
	maxChunks   int
	done        bool
	engineBad   bool // an engine timings object was garbage (logged once)
	// Output chunks by kind; a chunk with both kinds counts in both.
	reasoningChunks, answerChunks int
	refused                       bool // a refusal delta came
	// The kind of the last output chunk and the switches between kinds
	// (reasoning, answer, tool call): a switch may cost a delta no token.
	lastKind, switches int
	usageSeen          bool // a usage object came, zeroed or not
	modelTries         int  // events read for the response's model (responseModel)
	tools              *toolCallAssembler
}

// answerKeep is how much of r's answer is kept: all of it that is checked
// or sent back in a conversation's next turn, else a preview.
func answerKeep(r Request) int {
	if r.Scenario.ChecksAnswer() || r.Prompt.Turn > 0 {
		return maxAnswerBytes
	}
	return answerPreview
}

// readStream reads the event stream of r's answer; done says its final
// event came.
func (c *Client) readStream(ctx context.Context, body io.Reader, r Request, res *Result) (done bool) {
	st := &streamState{exactCounts: true, answerLimit: answerKeep(r), maxChunks: maxChunks(r.MaxTokens), tools: newToolCalls(config.MaxTools)}
	events := sse.NewReader(body, maxLineBytes)
	var chunk streamChunk
	var reason string
	var streamErr error
	for {
		ev, err := events.Next()
		now := time.Now()
		if err != nil {
			switch {
			case errors.Is(err, io.EOF) && !events.Partial():
			case errors.Is(err, io.EOF):
				reason, streamErr = reasonStreamCut, errors.New("stream ended inside an event")
			case errors.Is(err, sse.ErrLineTooLong):
				reason, streamErr = reasonLineTooLong, fmt.Errorf("%w (limit %d bytes)", err, maxLineBytes)
			default:
				reason, streamErr = reasonStreamCut, err
			}
			res.E2E = now.Sub(r.Sched)
			break
		}
		done, why, err := c.decode(ev, &chunk)
		if err != nil {
			reason, streamErr = why, err
			res.E2E = now.Sub(r.Sched)
			break
		}
		st.observe(&chunk, now.Sub(r.Sched), res)
		st.noteModel(ev, &chunk, res)
		if done {
			st.done = true
			res.E2E = now.Sub(r.Sched)
			break
		}
		if len(st.chunkAt) > st.maxChunks {
			// A server that ignores max_tokens would stream without end: stop reading.
			reason, streamErr = reasonMaxTokens, fmt.Errorf("more than %d output chunks for max_tokens %d: the server does not honour max_tokens", st.maxChunks, r.MaxTokens)
			res.E2E = now.Sub(r.Sched)
			break
		}
	}
	st.finish(res)
	res.ending = endingOf(res.FinishReason, st.refused)
	res.splitTTFT()
	if len(res.TTFTParts) > 0 {
		res.Note("ttft split: %s", res.TTFTSplitText())
	}
	switch {
	case streamErr != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.fail(OutcomeTimeout, phaseStream, transport.ReasonDeadline, fmt.Sprintf("deadline after %s, %d output tokens in: %v", res.E2E.Round(time.Millisecond), res.OutputChunks, streamErr))
	case streamErr != nil && ctx.Err() != nil:
		res.fail(OutcomeCancelled, phaseStream, transport.ReasonCancelled, streamErr.Error())
	case streamErr != nil:
		res.fail(OutcomeStreamError, phaseStream, reason, streamErr.Error())
	case !st.done && c.api.traits().final != "":
		res.fail(OutcomeStreamError, phaseStream, reasonNoFinish, "stream ended without "+c.api.traits().final)
	case !st.done && res.FinishReason == "":
		res.fail(OutcomeStreamError, phaseStream, reasonNoFinish, "stream ended with neither finish_reason nor [DONE]")
	case res.ending == reasonEngineAbort:
		res.failAbort()
	case res.OutputChunks == 0:
		res.fail(OutcomeStreamError, phaseStream, reasonNoOutput, "the stream ended without an output token ("+st.arrivedText(res)+")")
	case r.MaxTokens > 0 && st.lastUsage.CompletionTokens > r.MaxTokens:
		res.TokenMismatch = TokenMismatchAboveMax
		res.fail(OutcomeStreamError, phaseStream, reasonMaxTokens, fmt.Sprintf("usage reports %d completion tokens for max_tokens %d", st.lastUsage.CompletionTokens, r.MaxTokens))
	default:
		res.Outcome = OutcomeSuccess
		if !st.done {
			res.Note("no [DONE] line; finish_reason %q ends the stream", res.FinishReason)
		}
		res.logEnding()
	}
	return st.done
}

// noteModel takes the model the answer names from its first events: the
// chunk's, where its decoder read it, else the event's.
func (st *streamState) noteModel(ev sse.Event, chunk *streamChunk, res *Result) {
	if res.ResponseModel != "" || st.modelTries >= maxModelTries {
		return
	}
	st.modelTries++
	res.ResponseModel = truncate(chunk.Model, 128)
	if chunk.Model == "" {
		res.ResponseModel = responseModel(ev.Data)
	}
}

// arrivedText says how a stream without output ended, naming only what
// arrived: its finish reason and its usage's completion tokens.
func (st *streamState) arrivedText(res *Result) string {
	finish := "no finish_reason"
	if res.FinishReason != "" {
		finish = fmt.Sprintf("finish_reason %q", res.FinishReason)
	}
	if st.usageSeen {
		return fmt.Sprintf("%s, %d completion tokens in usage", finish, st.lastUsage.CompletionTokens)
	}
	return finish + ", no usage"
}

// decode reads one event into chunk, as the target's API writes its
// events; done is true for the event that ends the stream. An error comes
// with its reason.
func (c *Client) decode(ev sse.Event, chunk *streamChunk) (done bool, reason string, err error) {
	*chunk = streamChunk{Choices: chunk.Choices[:0]}
	return c.api.event(ev, chunk)
}

// observe takes one parsed chunk that arrived at offset at.
func (st *streamState) observe(chunk *streamChunk, at time.Duration, res *Result) {
	prevCompletion := st.lastUsage.CompletionTokens
	st.usageSeen = st.usageSeen || chunk.Usage != nil
	if u := chunk.Usage; u != nil && (u.CompletionTokens > 0 || u.PromptTokens > 0) {
		// Zeroed usage objects (Ollama sends one on every chunk) say nothing.
		// A later usage without the prompt (the Messages API's message_delta
		// after message_start's) keeps the prompt already read.
		prev := st.lastUsage
		st.lastUsage = *u
		if u.PromptTokens == 0 {
			st.lastUsage.PromptTokens, st.lastUsage.PromptTokensDetails = prev.PromptTokens, prev.PromptTokensDetails
		}
	}
	st.engineTimings(chunk, res)
	reasoning, answer, tool := false, false, false
	for i := range chunk.Choices {
		ch := &chunk.Choices[i]
		d := &ch.Delta
		if d.ReasoningContent != "" || d.Reasoning != "" {
			reasoning = true
		}
		if ch.Text != "" || d.Content != "" || d.Refusal != "" {
			answer = true
		}
		st.refused = st.refused || d.Refusal != ""
		// A tool-call delta with a name or arguments is a token; an empty one is not.
		if st.tools.Add(d.ToolCalls...) {
			answer, tool = true, true
			res.TTFTool = cmp.Or(res.TTFTool, at)
		}
		st.keepAnswer(ch.Text)
		st.keepAnswer(d.Content)
		st.keepAnswer(d.Refusal)
		if ch.FinishReason != "" {
			res.FinishReason = truncate(ch.FinishReason, 32)
		}
	}
	st.tools.Add(chunk.ToolItems...)
	if !reasoning && !answer {
		return
	}
	st.noteKind(reasoning, answer, tool)
	if len(st.chunkAt) == 0 {
		res.TTFT = at
		res.Note("first token")
	}
	if reasoning {
		if st.reasoningChunks == 0 {
			res.TTFTReasoning = at
		}
		st.reasoningChunks++
	}
	if answer {
		if st.answerChunks == 0 {
			res.TTFTAnswer = at
			if st.reasoningChunks > 0 {
				res.Note("first answer token after %d reasoning chunks", st.reasoningChunks)
			}
		}
		st.answerChunks++
	}
	st.chunkAt = append(st.chunkAt, at)
	// Running usage (vLLM continuous_usage_stats) tells how many tokens this chunk carried.
	if n := st.lastUsage.CompletionTokens - prevCompletion; chunk.Usage != nil && n > 0 {
		st.chunkTokens = append(st.chunkTokens, n)
	} else {
		st.exactCounts = false
	}
}

// engineTimings keeps the last timings object the engine sent; one that is
// garbage is logged once and leaves what was read before.
func (st *streamState) engineTimings(chunk *streamChunk, res *Result) {
	for _, o := range []struct {
		raw   json.RawMessage
		parse func(json.RawMessage) (*EngineTimings, error)
	}{{chunk.Metrics, parseVLLMMetrics}, {chunk.Timings, parseLlamaTimings}} {
		if len(o.raw) == 0 || bytes.Equal(bytes.TrimSpace(o.raw), []byte("null")) {
			continue
		}
		t, err := o.parse(o.raw)
		if err != nil && !st.engineBad {
			st.engineBad = true
			res.Note("engine timings partly ignored: %v", err)
		}
		if t != nil && (t.HasQueue || t.HasPrefill || t.HasDecode) {
			res.Engine = t
		}
	}
}

// Kinds of output chunk, for the token accounting.
const (
	kindReasoning = iota + 1
	kindAnswer
	kindTool
)

// noteKind counts a switch when this chunk's kind (its last, for a chunk of
// two) differs from the last chunk's.
func (st *streamState) noteKind(reasoning, answer, tool bool) {
	kind := kindReasoning
	switch {
	case tool:
		kind = kindTool
	case answer:
		kind = kindAnswer
	}
	if st.lastKind != 0 && kind != st.lastKind {
		st.switches++
	}
	st.lastKind = kind
}

// checkUsage holds the usage against the stream: a token per delta at
// least, but for a switch between kinds (reasoning to answer) and a tool
// call's name before its arguments, which may come in deltas of no token
// of their own. Usage below that floor is not believed: the deltas count.
func (st *streamState) checkUsage(res *Result) {
	floor := res.OutputChunks - st.switches - len(res.ToolCalls)
	if res.TokenSource != TokensFromUsage || res.OutputTokens >= floor {
		return
	}
	res.Note("usage says %d completion tokens, fewer than the stream carried (%d output deltas, %d switches between kinds, %d tool calls: at least %d tokens): counted from the deltas",
		res.OutputTokens, res.OutputChunks, st.switches, len(res.ToolCalls), floor)
	res.TokenMismatch = TokenMismatchBelowDeltas
	res.OutputTokens, res.TokenSource = res.OutputChunks, TokensFromChunks
	st.exactCounts = false
}

// keepAnswer keeps the answer's start, and a margin past the limit: scrub
// masks secrets before it cuts the answer to the limit, so no cut leaves
// half of a secret behind.
func (st *streamState) keepAnswer(s string) {
	limit := st.answerLimit + answerMargin
	if s == "" || st.answer.Len() >= limit {
		return
	}
	st.answer.WriteString(truncate(s, limit-st.answer.Len()))
}

// finish derives token counts, TPOT and per-token ITL once the stream ended.
func (st *streamState) finish(res *Result) {
	res.OutputChunks = len(st.chunkAt)
	res.Answer, res.answerLimit = st.answer.String(), st.answerLimit
	res.ToolCalls = st.tools.Calls()
	for _, tc := range res.ToolCalls {
		res.Note("tool call %s: %d bytes of arguments: %s", truncate(tc.Name, 64), len(tc.Arguments), truncate(tc.Arguments, 160))
	}
	if t := st.tools; t.Dropped+t.Unread > 0 {
		res.Note("tool calls: %d past the %d kept, %d deltas that were no JSON object", t.Dropped, config.MaxTools, t.Unread)
	}
	res.PromptTokensReported = st.lastUsage.PromptTokens
	res.CachedPromptTokens, res.CachedReported = st.lastUsage.Cached()
	if st.lastUsage.CompletionTokens > 0 {
		res.OutputTokens, res.TokenSource = st.lastUsage.CompletionTokens, TokensFromUsage
	} else {
		res.OutputTokens, res.TokenSource = res.OutputChunks, TokensFromChunks
		if res.OutputChunks > 0 {
			res.Note("no usage from the server: %d output tokens counted from chunks", res.OutputChunks)
		}
	}
	if st.lastUsage.CompletionTokens > 0 {
		res.Note("usage: prompt_tokens=%d completion_tokens=%d", st.lastUsage.PromptTokens, st.lastUsage.CompletionTokens)
		if res.CachedReported {
			res.Note("usage: %d prompt tokens from the engine's prefix cache", res.CachedPromptTokens)
		}
	}
	st.checkUsage(res)
	st.splitReasoning(res)
	if res.OutputChunks == 0 {
		return
	}
	if res.OutputTokens > 1 {
		res.TPOT = (res.E2E - res.TTFT) / time.Duration(res.OutputTokens-1)
	}
	res.ITL = perTokenITL(st.chunkAt, st.chunkTokens, st.exactCounts, res.OutputTokens)
	for i := 1; i < len(st.chunkAt); i++ {
		res.MaxGap = max(res.MaxGap, st.chunkAt[i]-st.chunkAt[i-1])
	}
}

// splitReasoning splits the output tokens into reasoning and answer: by the
// server's usage when it reports reasoning tokens, else one token per chunk
// of each kind.
func (st *streamState) splitReasoning(res *Result) {
	if n := st.lastUsage.Reasoning(); n > 0 && res.TokenSource == TokensFromUsage {
		res.ReasoningTokens, res.AnswerTokens, res.ReasoningSource = n, max(res.OutputTokens-n, 0), TokensFromUsage
	} else if st.reasoningChunks > 0 {
		res.ReasoningTokens, res.AnswerTokens, res.ReasoningSource = st.reasoningChunks, st.answerChunks, TokensFromChunks
	} else {
		return
	}
	res.Note("reasoning: %d reasoning and %d answer tokens (%s)", res.ReasoningTokens, res.AnswerTokens, res.ReasoningSource)
}
