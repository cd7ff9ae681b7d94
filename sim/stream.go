package sim

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/sim/internal/messages"
	"github.com/llmprobe/llmprobe/sim/internal/persona"
	"github.com/llmprobe/llmprobe/sim/internal/request"
	"github.com/llmprobe/llmprobe/sim/internal/responses"
	"github.com/llmprobe/llmprobe/sim/internal/shaped"
)

// streamWriter writes one response as server-sent events, in the framing of
// real engines, with the request's faults.
type streamWriter struct {
	w                    http.ResponseWriter
	chat                 bool
	id, model            string
	created              int64
	faults               Faults
	plan                 plan
	prompt               int
	words                []string
	includeUsage         bool
	continuous           bool
	stalled, malformedIn bool
	timings              persona.TimingsKind
	// transcription frames the answer as vLLM's transcription chunks.
	transcription bool
	// events, for the Responses and Messages APIs, frames the answer as
	// typed events.
	events typedEvents
	// seq is the request's sequence: its cached prompt tokens, known once
	// it was admitted (before its first token).
	seq *sequence
	// stamps, when the engine records truth, get the wall-clock time of
	// each output chunk's write.
	stamps []int64
	// shape is an answer of function calls or JSON text, or nil.
	shape *shaped.Answer
}

type chunkChoice struct {
	Index        int             `json:"index"`
	Text         *string         `json:"text,omitempty"`
	Delta        *map[string]any `json:"delta,omitempty"`
	Logprobs     any             `json:"logprobs"`
	FinishReason *string         `json:"finish_reason"`
}

// transcriptionChoice is a transcription chunk's choice, as vLLM writes
// it: no index, no logprobs, and its finish and stop reasons only on the
// last (vLLM leaves unset fields out).
type transcriptionChoice struct {
	Delta map[string]any `json:"delta"`
	*transcriptionEnd
}

type transcriptionEnd struct {
	FinishReason string  `json:"finish_reason"`
	StopReason   *string `json:"stop_reason"`
}

type chunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	// Choices are []chunkChoice, or []transcriptionChoice.
	Choices any                     `json:"choices"`
	Usage   *usageJSON              `json:"usage,omitempty"`
	Metrics *persona.RequestMetrics `json:"metrics,omitempty"`
	Timings *persona.LlamaTimings   `json:"timings,omitempty"`
}

func (st *streamWriter) run(ctx context.Context, s *sequence) {
	h := st.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	st.w.WriteHeader(http.StatusOK)
	st.flush()
	_, atFirstToken := st.events.(*messages.Stream)
	if st.events != nil && !atFirstToken {
		st.writeRaw(st.startEvents())
	} else if st.chat && st.faults.RoleOnlyFirstChunk {
		st.write(st.deltaChunk(map[string]any{"role": "assistant", "content": ""}, nil, 0))
	}
	sent := 0
	var pending []string
	reasoning := false
	flushPending := func() bool {
		if len(pending) == 0 {
			return true
		}
		text, from := strings.Join(pending, ""), sent
		sent += len(pending)
		pending = pending[:0]
		st.writeTokens(text, from, sent, reasoning)
		return st.afterChunk(ctx, sent)
	}
	for i := range s.maxTokens {
		if !waitToken(ctx, s) {
			return // the client left, or the engine stopped
		}
		if i == 0 && atFirstToken {
			// message_start carries the prompt's cache reads, known (and
			// read without a race) once the sequence was admitted.
			st.writeRaw(st.startEvents())
		}
		isReasoning := st.chat && i < st.faults.ReasoningTokens
		if isReasoning != reasoning && !flushPending() {
			return
		}
		reasoning = isReasoning
		pending = append(pending, st.words[i])
		if len(pending) >= st.faults.TokensPerChunk || i == s.maxTokens-1 {
			if !flushPending() {
				return
			}
		}
	}
	if st.events != nil {
		st.endEvents(sent)
		return
	}
	finish := st.finish(sent)
	var usage *usageJSON
	separate := st.includeUsage && st.faults.UsagePlacement == UsageSeparate
	if st.includeUsage && st.faults.UsagePlacement == UsageFinish {
		usage = st.usage(sent)
	}
	var last chunk
	switch {
	case st.transcription:
		last = st.transcriptionEndChunk(finish, sent).withUsage(usage)
	case st.chat:
		last = st.deltaChunk(map[string]any{}, &finish, sent).withUsage(usage)
	default:
		last = st.textChunk("", &finish, sent).withUsage(usage)
	}
	if !separate {
		st.withTimings(&last, s)
	}
	st.write(last)
	if separate {
		c := chunk{ID: st.id, Object: st.object(), Created: st.created, Model: st.model, Choices: []chunkChoice{}, Usage: st.usage(sent)}
		st.withTimings(&c, s)
		st.write(c)
	}
	if !st.faults.OmitDone {
		st.writeRaw("data: [DONE]\n\n")
	}
}

// writeTokens writes tokens [from, sent), text their words joined, as one
// chunk (or Responses API events): a shaped answer's function-call deltas,
// else reasoning or answer text.
func (st *streamWriter) writeTokens(text string, from, sent int, reasoning bool) {
	calls := st.shape != nil && st.shape.Calls != nil
	switch {
	case st.events != nil && calls:
		st.writeLine(st.shape.Events(st.events, from, sent), true)
	case st.events != nil:
		st.writeLine(st.events.Delta(text, reasoning), true)
	case calls:
		st.writeOutput(st.deltaChunk(st.shape.ChatDelta(from, sent), nil, sent))
	case st.transcription:
		st.writeOutput(st.transcriptionChunk(text, sent))
	case !st.chat:
		st.writeOutput(st.textChunk(text, nil, sent))
	case reasoning:
		st.writeOutput(st.deltaChunk(map[string]any{"reasoning_content": text}, nil, sent))
	default:
		st.writeOutput(st.deltaChunk(map[string]any{"content": text}, nil, sent))
	}
}

// afterChunk applies the faults due once sent tokens went out; false ends the stream.
func (st *streamWriter) afterChunk(ctx context.Context, sent int) bool {
	if st.plan.malformed && !st.malformedIn && sent >= st.faults.MalformedAfterTokens {
		st.malformedIn = true
		st.writeRaw("data: {\"choices\": [{\"index\": 0, \"text\": \"\n\n")
	}
	if st.plan.disconnect && sent >= st.faults.DisconnectAfterTokens {
		// Cut the connection with no terminating chunk and no [DONE].
		panic(http.ErrAbortHandler)
	}
	if st.plan.stall && !st.stalled && sent >= st.faults.StallAfterTokens {
		st.stalled = true
		t := time.NewTimer(st.faults.StallDuration)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// withTimings puts the request's timings on its last chunk, as the engines
// do: vLLM's metrics ride on the final usage chunk, so only with
// include_usage; llama.cpp's timings on the last chunk, always.
func (st *streamWriter) withTimings(c *chunk, s *sequence) {
	switch {
	case st.timings == persona.TimingsVLLM && c.Usage != nil && st.includeUsage:
		c.Metrics = persona.RequestMetricsOf(s.course())
	case st.timings == persona.TimingsLlamaCPP:
		c.Timings = persona.LlamaTimingsOf(s.course())
	}
}

func (st *streamWriter) usage(completion int) *usageJSON {
	u := &usageJSON{PromptTokens: st.prompt, CompletionTokens: completion, TotalTokens: st.prompt + completion}
	if n := min(completion, st.faults.ReasoningTokens); st.chat && n > 0 {
		u.CompletionTokensDetails = &tokensDetails{ReasoningTokens: n}
	}
	u.PromptTokensDetails = st.seq.promptDetails()
	return u
}

// runningUsage is what a chunk carries besides the final usage.
func (st *streamWriter) runningUsage(sent int) *usageJSON {
	switch {
	case st.continuous:
		return st.usage(sent)
	case st.faults.ZeroedUsage:
		return &usageJSON{}
	}
	return nil
}

func (st *streamWriter) textChunk(text string, finish *string, sent int) chunk {
	return chunk{ID: st.id, Object: "text_completion", Created: st.created, Model: st.model,
		Choices: []chunkChoice{{Text: &text, FinishReason: finish}}, Usage: st.runningUsage(sent)}
}

func (st *streamWriter) deltaChunk(delta map[string]any, finish *string, sent int) chunk {
	return chunk{ID: st.id, Object: "chat.completion.chunk", Created: st.created, Model: st.model,
		Choices: []chunkChoice{{Delta: &delta, FinishReason: finish}}, Usage: st.runningUsage(sent)}
}

// transcriptionChunk carries text of a transcript.
func (st *streamWriter) transcriptionChunk(text string, sent int) chunk {
	return st.transcriptionOf(transcriptionChoice{Delta: map[string]any{"content": text}}, sent)
}

// transcriptionEndChunk ends a transcript: an empty delta, with its finish
// reason.
func (st *streamWriter) transcriptionEndChunk(finish string, sent int) chunk {
	return st.transcriptionOf(transcriptionChoice{Delta: map[string]any{}, transcriptionEnd: &transcriptionEnd{FinishReason: finish}}, sent)
}

func (st *streamWriter) transcriptionOf(choice transcriptionChoice, sent int) chunk {
	return chunk{ID: st.id, Object: "transcription.chunk", Created: st.created, Model: st.model,
		Choices: []transcriptionChoice{choice}, Usage: st.runningUsage(sent)}
}

// object is the type of the stream's chunks.
func (st *streamWriter) object() string {
	switch {
	case st.transcription:
		return "transcription.chunk"
	case st.chat:
		return "chat.completion.chunk"
	}
	return "text_completion"
}

func (c chunk) withUsage(u *usageJSON) chunk {
	if u != nil {
		c.Usage = u
	}
	return c
}

func (st *streamWriter) write(c chunk) { st.writeChunk(c, false) }

// writeOutput writes a chunk that carries output: stamped when the engine
// records truth.
func (st *streamWriter) writeOutput(c chunk) { st.writeChunk(c, true) }

// writeChunk encodes c, then stamps an output chunk just before the write,
// so the stamp never counts the encoding.
func (st *streamWriter) writeChunk(c chunk, output bool) {
	b, _ := json.Marshal(c)
	st.writeLine("data: "+string(b)+"\n\n", output)
}

// writeLine writes an encoded event, stamping one that carries output.
func (st *streamWriter) writeLine(line string, output bool) {
	if output && st.stamps != nil {
		st.stamps = append(st.stamps, truthNow())
	}
	st.writeRaw(line)
}

func (st *streamWriter) writeRaw(s string) {
	_, _ = st.w.Write([]byte(s))
	st.flush()
}

func (st *streamWriter) flush() {
	if f, ok := st.w.(http.Flusher); ok {
		f.Flush()
	}
}

// shapeSeed sets a shaped answer's generator apart from the request's own.
const shapeSeed = 0x5ba9ed

// shapeOf is the answer of function calls or JSON text that req asks for,
// or nil. Its draws come from a generator of their own, so they move no
// other draw of request n.
func (e *Engine) shapeOf(req *request.Generate, n uint64, fault string) (*shaped.Answer, error) {
	return shaped.Plan(shaped.Request{Tools: req.Tools, ToolChoice: req.ToolChoice, ResponseFormat: req.ResponseFormat, Text: req.Text},
		rand.New(rand.NewPCG(uint64(e.cfg.Seed)^shapeSeed, n)), fault, e.cfg.Engine == persona.LlamaCPP)
}

// finish is the finish_reason of an answer of sent tokens: a shaped
// answer's own when it was given whole, stop where a golden answer ended,
// else the length asked for.
func (st *streamWriter) finish(sent int) string {
	if st.shape != nil && sent == st.shape.Tokens() {
		return st.shape.Finish()
	}
	return st.seq.finishReason()
}

// endpoint is the API a request came in on.
type endpoint int

const (
	apiCompletions endpoint = iota
	apiChat
	apiResponses
	apiMessages
)

// kind is the request package's name of the API.
func (api endpoint) kind() request.Kind {
	return [...]request.Kind{apiCompletions: request.Completions, apiChat: request.Chat, apiResponses: request.Responses, apiMessages: request.Messages}[api]
}

// typedEvents frames an answer as an API's typed events: the Responses
// API's (*responses.Stream) or the Messages API's (*messages.Stream).
type typedEvents interface {
	Delta(text string, reasoning bool) string
	shaped.CallWriter
}

// startEvents opens a typed stream: the Messages API's message_start
// carries the prompt's usage (none under usage_placement none).
func (st *streamWriter) startEvents() string {
	switch ev := st.events.(type) {
	case *messages.Stream:
		if !st.includeUsage {
			return ev.Start(nil)
		}
		return ev.Start(messagesUsage(st.usage(0)))
	case *responses.Stream:
		return ev.Start()
	}
	return ""
}

// endEvents closes a typed stream: its usage in response.completed, or in
// message_delta.
func (st *streamWriter) endEvents(sent int) {
	var full *usageJSON
	if st.includeUsage {
		full = st.usage(sent)
	}
	switch ev := st.events.(type) {
	case *messages.Stream:
		st.writeRaw(ev.End(st.finish(sent), messagesUsage(full)))
	case *responses.Stream:
		st.writeRaw(ev.End(responsesUsage(full)))
	}
}

// messagesUsage is a chat usage in the Messages API's terms; nil for nil.
func messagesUsage(full *usageJSON) *messages.Usage {
	if full == nil {
		return nil
	}
	u := &messages.Usage{Input: full.PromptTokens, Output: full.CompletionTokens}
	if d := full.PromptTokensDetails; d != nil {
		u.CacheRead = d.CachedTokens
		u.Input -= d.CachedTokens
	}
	return u
}

// responsesUsage is a chat usage in the Responses API's terms; nil for nil.
func responsesUsage(full *usageJSON) *responses.Usage {
	if full == nil {
		return nil
	}
	u := &responses.Usage{Input: full.PromptTokens, Output: full.CompletionTokens}
	if d := full.CompletionTokensDetails; d != nil {
		u.Reasoning = d.ReasoningTokens
	}
	if d := full.PromptTokensDetails; d != nil {
		u.Cached = &d.CachedTokens
	}
	return u
}
