// The wire format the OpenAI-compatible APIs share: streamed chunks of
// choices (chat and completions, and the Responses API's events read into
// them), usage, model lists and error bodies.

package prober

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"strings"
	"unicode/utf8"

	"github.com/llmprobe/llmprobe/lib/redact"
	"github.com/llmprobe/llmprobe/lib/sse"
)

// modelList is /v1/models' answer.
type modelList struct {
	Data []struct {
		ID      string `json:"id"`
		OwnedBy string `json:"owned_by"`
	} `json:"data"`
}

// streamChunk is the part of a streamed completions or chat chunk llmprobe
// reads. Its choices' output deltas (Text, Content, ReasoningContent,
// Reasoning, Refusal) may share the event's memory: they are valid until
// the next event is read, and copied where kept.
type streamChunk struct {
	Choices []choice        `json:"choices"`
	Usage   *usage          `json:"usage"`
	Error   json.RawMessage `json:"error"`
	// The engine's own timings of the request: vLLM's `metrics` (with
	// --enable-per-request-metrics and include_metrics), llama.cpp's
	// `timings`. Raw, so a garbage value is ignored, never fatal.
	Metrics json.RawMessage `json:"metrics"`
	Timings json.RawMessage `json:"timings"`
	// Model is the model a chat or completions chunk names.
	Model string `json:"-"`
	// ToolItems are Responses API events that open or close a function
	// call (its name, its whole arguments): no output token.
	ToolItems []json.RawMessage `json:"-"`
}

// choice is one choice of a chunk.
type choice struct {
	Text         string      `json:"text"`
	Delta        choiceDelta `json:"delta"`
	FinishReason string      `json:"finish_reason"`
}

// choiceDelta is what a chat chunk's choice adds.
type choiceDelta struct {
	Content          string            `json:"content"`
	ReasoningContent string            `json:"reasoning_content"`
	Reasoning        string            `json:"reasoning"`
	Refusal          string            `json:"refusal"`
	ToolCalls        []json.RawMessage `json:"tool_calls"`
}

// usage is a chunk's token counts.
type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// Reasoning tokens among the completion tokens: OpenAI's shape, and
	// SGLang's top-level field (0 there when the model did not reason).
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	ReasoningTokens int `json:"reasoning_tokens"`
	// Prompt tokens the engine's prefix cache served (vLLM with
	// --enable-prompt-tokens-details, SGLang, OpenAI); nil when not reported.
	PromptTokensDetails *promptDetails `json:"prompt_tokens_details"`
}

// promptDetails says how many prompt tokens the prefix cache served.
type promptDetails struct {
	CachedTokens *int `json:"cached_tokens"`
}

// Reasoning is the reasoning token count the usage reports, 0 for none.
func (u usage) Reasoning() int {
	if d := u.CompletionTokensDetails; d != nil && d.ReasoningTokens > 0 {
		return d.ReasoningTokens
	}
	return max(u.ReasoningTokens, 0)
}

// Cached is the prompt tokens the usage says the engine's prefix cache
// served; ok is false where it reports none, or a count past the prompt's.
func (u usage) Cached() (n int, ok bool) {
	if d := u.PromptTokensDetails; d != nil && d.CachedTokens != nil && *d.CachedTokens >= 0 && *d.CachedTokens <= u.PromptTokens {
		return *d.CachedTokens, true
	}
	return 0, false
}

// Bounds of what a failed answer's body makes llmprobe hold.
const (
	maxErrorBody   = 4 << 10 // read of a failed response, for its message
	maxBodyExcerpt = 512     // of which a failure keeps this much
	maxMessage     = 256
)

// readError reads a failed answer's body, bounded, and returns the server's
// error message (from the usual JSON shapes, else the text) and an excerpt
// of its first bytes, both printable. The target's secrets are masked
// before anything is cut, so no cut leaves half of one.
func readError(r io.Reader, c io.Closer, red *redact.Redactor) (msg, excerpt string) {
	b := readBounded(r, c, maxErrorBody, errorGrace)
	b = red.Bytes(b)
	excerpt = printable(truncate(string(b), maxBodyExcerpt))
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(b, &e) == nil {
		var obj struct {
			Message string `json:"message"`
		}
		// Decoded, an escaped secret is itself again: masked once more.
		if json.Unmarshal(e.Error, &obj) == nil && obj.Message != "" {
			return printable(truncate(red.String(obj.Message), maxMessage)), excerpt
		}
		var s string
		if json.Unmarshal(e.Error, &s) == nil && s != "" {
			return printable(truncate(red.String(s), maxMessage)), excerpt
		}
		if e.Message != "" {
			return printable(truncate(red.String(e.Message), maxMessage)), excerpt
		}
	}
	return printable(truncate(strings.TrimSpace(string(b)), maxMessage)), excerpt
}

// printable replaces control characters (a body may be binary) so the text
// is safe in a log line and a page.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || (r >= 0x20 && r != 0x7f && r != utf8.RuneError) {
			return r
		}
		return '.'
	}, s)
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// choicesFields sets what chat and completions both ask: the output cap,
// and on a stream its usage (include_usage gives exact token counts;
// extra_body may add engine options such as vLLM's continuous_usage_stats).
func choicesFields(body map[string]any, r BodyRequest) {
	body["max_tokens"] = r.MaxTokens
	if r.Unstreamed {
		return
	}
	streamOptions := map[string]any{}
	if extra, ok := r.Extra["stream_options"].(map[string]any); ok {
		maps.Copy(streamOptions, extra)
	}
	streamOptions["include_usage"] = true
	body["stream_options"] = streamOptions
}

// choicesEvent reads one event of a chat or completions stream into c:
// [DONE] ends it; an error event, or a chunk that carries an error, is the
// server's failure.
func choicesEvent(ev sse.Event, c *streamChunk) (done bool, reason string, err error) {
	if ev.Name == "error" {
		return false, reasonErrorInStream, fmt.Errorf("error event: %s", truncate(string(ev.Data), 256))
	}
	if bytes.Equal(bytes.TrimSpace(ev.Data), []byte("[DONE]")) {
		return true, "", nil
	}
	if err := decodeChunk(ev.Data, c); err != nil {
		return false, reasonMalformed, fmt.Errorf("malformed chunk: %v: %s", err, truncate(string(ev.Data), 128))
	}
	if len(c.Error) > 0 && !bytes.Equal(c.Error, []byte("null")) {
		return false, reasonErrorInStream, fmt.Errorf("error in stream: %s", truncate(string(c.Error), 256))
	}
	return false, "", nil
}

// maxModelTries bounds the events read for the model the answer names:
// engines name it in the first chunk (chat, completions) or event
// (response.created), so a stream that does not is not decoded twice per
// event to the end.
const maxModelTries = 2

// responseModel is the model a chunk, a Responses or Messages event names,
// bounded; "" when it names none.
func responseModel(data []byte) string {
	type named struct {
		Model string `json:"model"`
	}
	var m struct {
		Model    string `json:"model"`
		Response *named `json:"response"` // the Responses API's response.created
		Message  *named `json:"message"`  // the Messages API's message_start
	}
	if json.Unmarshal(data, &m) != nil {
		return ""
	}
	for _, inner := range []*named{m.Response, m.Message} {
		if m.Model == "" && inner != nil {
			m.Model = inner.Model
		}
	}
	return truncate(m.Model, 128)
}
