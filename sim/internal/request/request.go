// Package request reads a generation request (completions, chat or the
// Responses API) as the sim needs it: its prompt's cost in tokens, its
// blocks for the prefix cache, its texts, and the answer it asks for.
package request

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/llmprobe/llmprobe/sim/internal/content"
	"github.com/llmprobe/llmprobe/sim/internal/prefixcache"
)

// Generate is a generation request's body; a Responses API request is read
// as the chat request it stands for.
type Generate struct {
	Model               string          `json:"model"`
	Prompt              json.RawMessage `json:"prompt"`
	Messages            []Message       `json:"messages"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	// The Responses API's prompt and output cap.
	Input           json.RawMessage `json:"input"`
	MaxOutputTokens *int            `json:"max_output_tokens"`
	Stream          bool            `json:"stream"`
	IncludeMetrics  bool            `json:"include_metrics"`
	StreamOptions   *struct {
		IncludeUsage         bool `json:"include_usage"`
		ContinuousUsageStats bool `json:"continuous_usage_stats"`
	} `json:"stream_options"`
	// The answer's shape, read by sim/internal/shaped.
	Tools          json.RawMessage `json:"tools"`
	ToolChoice     json.RawMessage `json:"tool_choice"`
	ResponseFormat json.RawMessage `json:"response_format"`
	Text           json.RawMessage `json:"text"`
	// The Messages API's system prompt, a string or text blocks.
	System json.RawMessage `json:"system"`

	chat bool // messages, not a prompt
}

// Message is one chat message; its content a string or content parts.
type Message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// MaxBody bounds a request's body: 16 images of 2048×2048 pixels,
// llmprobe's most, stored uncompressed, come to 85 MiB.
const MaxBody = 128 << 20

// ErrTooLarge is a body past MaxBody.
var ErrTooLarge = fmt.Errorf("request body over %d MiB", MaxBody>>20)

// Kind is the API a request came in on.
type Kind int

const (
	Completions Kind = iota
	Chat
	Responses
	Messages // Anthropic's
)

// Read decodes a request's body of kind: chat's messages, the Responses
// API's input (a string is one user message), the Messages API's messages
// after its system (its tools read as chat's), or a completions prompt.
func Read(w http.ResponseWriter, body io.ReadCloser, kind Kind) (*Generate, error) {
	g := &Generate{chat: kind != Completions}
	if err := json.NewDecoder(http.MaxBytesReader(w, body, MaxBody)).Decode(g); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, ErrTooLarge
		}
		return nil, fmt.Errorf("invalid JSON body: %w", err)
	}
	if kind == Messages {
		return g, g.fromMessagesAPI()
	}
	if kind != Responses {
		return g, nil
	}
	var text string
	if json.Unmarshal(g.Input, &text) == nil {
		g.Messages = []Message{{Role: "user", Content: g.Input}}
		return g, nil
	}
	if err := json.Unmarshal(g.Input, &g.Messages); err != nil {
		return nil, fmt.Errorf("input must be a string or a list of messages: %v", err)
	}
	return g, nil
}

// TemplateTokens are what a chat template adds around each message, as real
// engines' do, so a chat request's reported prompt tokens exceed the words
// sent.
const TemplateTokens = 4

// PromptTokens is what the prompt costs to prefill: its words, a chat
// message's template tokens and its images' tokens, one per patch×patch
// pixels.
func (g *Generate) PromptTokens(patch int) (int, error) {
	if !g.chat {
		if len(g.Prompt) == 0 {
			return 0, errors.New("prompt is required")
		}
		return content.Words(g.Prompt), nil
	}
	if len(g.Messages) == 0 {
		return 0, errors.New("messages must not be empty")
	}
	n := 0
	for _, m := range g.Messages {
		images, err := content.ImageTokens(m.Content, patch)
		if err != nil {
			return 0, err
		}
		n += TemplateTokens + content.Words(m.Content) + images
	}
	return n, nil
}

// AnswerTokens is the answer length asked for (max_tokens and its
// spellings), else def.
func (g *Generate) AnswerTokens(def int) int {
	n := def
	for _, m := range []*int{g.MaxTokens, g.MaxCompletionTokens, g.MaxOutputTokens} {
		if m != nil {
			n = *m
		}
	}
	return n
}

// Texts are the prompt's texts: each message's, or the prompt's.
func (g *Generate) Texts() []string {
	var texts []string
	if !g.chat {
		content.EachText(g.Prompt, func(t string) { texts = append(texts, t) })
		return texts
	}
	for _, m := range g.Messages {
		var text strings.Builder
		content.EachText(m.Content, func(t string) { text.WriteString(t) })
		texts = append(texts, text.String())
	}
	return texts
}

// Blocks hashes the prompt's full blocks of tokens for the prefix cache: a
// chat prompt's tokens are, per message, its role and template tokens then
// its words; a completion's, its words.
func (g *Generate) Blocks() []uint64 {
	b := prefixcache.NewHasher()
	add := func(raw json.RawMessage) {
		content.EachText(raw, func(text string) {
			for _, w := range strings.Fields(text) {
				b.Add(w)
			}
		})
	}
	if !g.chat {
		add(g.Prompt)
		return b.Hashes()
	}
	for _, m := range g.Messages {
		b.Add("<|" + m.Role + "|>")
		for range TemplateTokens - 1 {
			b.Add("<|t|>")
		}
		add(m.Content)
	}
	return b.Hashes()
}

// fromMessagesAPI reads a Messages API request as the chat request it
// stands for: its system first as a system message, its tools (name,
// description, input_schema) and tool_choice (auto, any, none, tool) in
// chat's shapes, which sim/internal/shaped reads.
func (g *Generate) fromMessagesAPI() error {
	if len(g.System) > 0 {
		g.Messages = append([]Message{{Role: "system", Content: g.System}}, g.Messages...)
	}
	if len(g.Tools) > 0 {
		var tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		}
		if err := json.Unmarshal(g.Tools, &tools); err != nil {
			return fmt.Errorf("tools: %v", err)
		}
		chat := make([]map[string]any, len(tools))
		for i, t := range tools {
			chat[i] = map[string]any{"type": "function", "function": map[string]any{"name": t.Name, "description": t.Description, "parameters": t.InputSchema}}
		}
		g.Tools, _ = json.Marshal(chat)
	}
	if len(g.ToolChoice) > 0 {
		var choice struct{ Type, Name string }
		if err := json.Unmarshal(g.ToolChoice, &choice); err != nil {
			return fmt.Errorf("tool_choice: %v", err)
		}
		var chat any = choice.Type
		switch choice.Type {
		case "any":
			chat = "required"
		case "tool":
			chat = map[string]any{"type": "function", "function": map[string]any{"name": choice.Name}}
		}
		g.ToolChoice, _ = json.Marshal(chat)
	}
	return nil
}
