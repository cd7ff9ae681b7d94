// The wire format shared by the OpenAI-compatible APIs: streamed chunks,
// usage, model lists and error bodies.

package prober

import (
	"encoding/json"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/lib/redact"
)

// APIPath is the API's endpoint under the server's root.
func APIPath(api config.API) string {
	switch api {
	case config.APICompletions:
		return "/v1/completions"
	case config.APIResponses:
		return "/v1/responses"
	}
	return "/v1/chat/completions"
}

// ModelList is /v1/models' answer.
type ModelList struct {
	Data []struct {
		ID      string `json:"id"`
		OwnedBy string `json:"owned_by"`
	} `json:"data"`
}

// Chunk is the part of a streamed completions or chat chunk llmprobe reads.
type Chunk struct {
	Choices []Choice        `json:"choices"`
	Usage   *Usage          `json:"usage"`
	Error   json.RawMessage `json:"error"`
	// The engine's own timings of the request: vLLM's `metrics` (with
	// --enable-per-request-metrics and include_metrics), llama.cpp's
	// `timings`. Raw, so a garbage value is ignored, never fatal.
	Metrics json.RawMessage `json:"metrics"`
	Timings json.RawMessage `json:"timings"`
	// ToolItems are Responses API events that open or close a function
	// call (its name, its whole arguments): no output token.
	ToolItems []json.RawMessage `json:"-"`
}

// Choice is one choice of a chunk.
type Choice struct {
	Text         string `json:"text"`
	Delta        Delta  `json:"delta"`
	FinishReason string `json:"finish_reason"`
}

// Delta is what a chat chunk's choice adds.
type Delta struct {
	Content          string            `json:"content"`
	ReasoningContent string            `json:"reasoning_content"`
	Reasoning        string            `json:"reasoning"`
	ToolCalls        []json.RawMessage `json:"tool_calls"`
}

// Usage is a chunk's token counts.
type Usage struct {
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
	PromptTokensDetails *PromptDetails `json:"prompt_tokens_details"`
}

// PromptDetails says how many prompt tokens the prefix cache served.
type PromptDetails struct {
	CachedTokens *int `json:"cached_tokens"`
}

// Reasoning is the reasoning token count the usage reports, 0 for none.
func (u Usage) Reasoning() int {
	if d := u.CompletionTokensDetails; d != nil && d.ReasoningTokens > 0 {
		return d.ReasoningTokens
	}
	return max(u.ReasoningTokens, 0)
}

// Cached is the prompt tokens the usage says the engine's prefix cache
// served; ok is false where it reports none, or a count past the prompt's.
func (u Usage) Cached() (n int, ok bool) {
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

// ReadError reads a failed answer's body, bounded, and returns the server's
// error message (from the usual JSON shapes, else the text) and an excerpt
// of its first bytes, both printable. The target's secrets are masked
// before anything is cut, so no cut leaves half of one.
func ReadError(r io.Reader, red *redact.Redactor) (msg, excerpt string) {
	b, _ := io.ReadAll(io.LimitReader(r, maxErrorBody))
	b = red.Bytes(b)
	excerpt = printable(Truncate(string(b), maxBodyExcerpt))
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
			return printable(Truncate(red.String(obj.Message), maxMessage)), excerpt
		}
		var s string
		if json.Unmarshal(e.Error, &s) == nil && s != "" {
			return printable(Truncate(red.String(s), maxMessage)), excerpt
		}
		if e.Message != "" {
			return printable(Truncate(red.String(e.Message), maxMessage)), excerpt
		}
	}
	return printable(Truncate(strings.TrimSpace(string(b)), maxMessage)), excerpt
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

// Truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
