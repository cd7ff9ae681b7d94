package prober

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/lib/sse"
	"github.com/llmprobe/llmprobe/prompt"
)

// anthropicMessages is Anthropic's Messages API (/v1/messages), which vLLM,
// SGLang and llama.cpp serve beside OpenAI's: the prompt is the last user
// message, a conversation's system lines its top-level system; a stream is
// typed events (message_start, content blocks of text, thinking or
// tool_use, message_delta with the stop reason and usage, message_stop),
// each read into the chat chunk it stands for; an unstreamed answer is the
// message object.
type anthropicMessages struct{}

// anthropicVersion is the API version every request names unless the
// target's http_headers set one.
const anthropicVersion = "2023-06-01"

func (anthropicMessages) path(dialect) string { return "/v1/messages" }

func (anthropicMessages) traits() traits { return traits{tokens: true, final: "message_stop"} }

func (anthropicMessages) headers() map[string]string {
	return map[string]string{"anthropic-version": anthropicVersion}
}

func (anthropicMessages) body(model string, r Request, extra map[string]any, _ dialect) (payload, error) {
	return textBody(textRequest(config.APIMessages, model, r, extra), r)
}

// fields sets the Messages API's own: max_tokens (required), the tools in
// its shape, a conversation's system and developer lines as its system,
// and the messages.
func (anthropicMessages) fields(body map[string]any, r BodyRequest, content string) {
	body["max_tokens"] = r.MaxTokens
	messagesTools(body, &r.Structured)
	var system []string
	turns := make([]prompt.Message, 0, len(r.History))
	for _, m := range r.History {
		if m.Role == "system" || m.Role == "developer" {
			system = append(system, m.Content)
			continue
		}
		turns = append(turns, m)
	}
	if len(system) > 0 {
		body["system"] = strings.Join(system, "\n\n")
	}
	body["messages"] = messages(turns, content)
}

// messagesTools sets the scenario's tools as the Messages API takes them:
// name, description and input_schema; tool_choice auto, any (required),
// none, or one tool by name.
func messagesTools(body map[string]any, s *config.Structured) {
	if len(s.Tools) > 0 {
		tools := make([]map[string]any, len(s.Tools))
		for i, t := range s.Tools {
			tool := map[string]any{"name": t.Function.Name, "input_schema": t.Function.Parameters}
			if t.Function.Parameters == nil {
				tool["input_schema"] = map[string]any{"type": "object"}
			}
			if t.Function.Description != "" {
				tool["description"] = t.Function.Description
			}
			tools[i] = tool
		}
		body["tools"] = tools
	}
	if s.ToolChoice == nil {
		return
	}
	switch mode, name := s.Choice(); mode {
	case config.ChoiceRequired:
		body["tool_choice"] = map[string]any{"type": "any"}
	case config.ChoiceFunction:
		body["tool_choice"] = map[string]any{"type": "tool", "name": name}
	default: // auto, none
		body["tool_choice"] = map[string]any{"type": mode}
	}
}

func (anthropicMessages) event(ev sse.Event, c *streamChunk) (bool, string, error) {
	return typedEvent(readMessagesEvent, ev, c)
}

func (anthropicMessages) whole(body io.Reader, _ http.Header, r Request, keep int, _ dialect) (*answer, error) {
	return readText(body, r.MaxTokens, keep, readMessage)
}

// messagesEvent is the part of a Messages API stream event llmprobe reads:
// one shape for every type, decoded once.
type messagesEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message *struct {
		Usage *messagesUsage `json:"usage"`
	} `json:"message"`
	ContentBlock *struct {
		Type string `json:"type"`
		Name string `json:"name"`
		Text string `json:"text"`
	} `json:"content_block"`
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *messagesUsage `json:"usage"`
	Error *messagesError `json:"error"`
}

// messagesError is the error an error event or an error answer carries.
type messagesError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// text is the error in one bounded line: "overloaded_error: Overloaded".
func (e *messagesError) text() string {
	if e == nil {
		return "no error given"
	}
	return truncate(strings.TrimPrefix(e.Type+": "+e.Message, ": "), maxMessage)
}

// messagesUsage is a Messages API usage: input_tokens leaves out the
// prompt tokens its cache read or wrote, which the prompt still had.
type messagesUsage struct {
	InputTokens              *int `json:"input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
}

// chat is u in chat's terms: the prompt all of its input, cached or not;
// a count it leaves out is 0.
func (u *messagesUsage) chat() *usage {
	n := func(p *int) int {
		if p == nil {
			return 0
		}
		return *p
	}
	out := &usage{PromptTokens: n(u.InputTokens) + n(u.CacheReadInputTokens) + n(u.CacheCreationInputTokens), CompletionTokens: n(u.OutputTokens)}
	if u.CacheReadInputTokens != nil {
		cached := *u.CacheReadInputTokens
		out.PromptTokensDetails = &promptDetails{CachedTokens: &cached}
	}
	return out
}

// readMessagesEvent reads one Messages API event into the chat chunk it
// stands for: text deltas are content, thinking deltas reasoning, a
// tool_use block's start and its input_json deltas a function call (as
// chat's tool_calls elements, which the tool-call assembler reads), and
// message_delta's stop reason and usage the chunk's. final is true for
// message_stop. An error event is a *serverFailure; pings and block ends
// carry nothing.
func readMessagesEvent(name string, data []byte, c *streamChunk) (final bool, err error) {
	var ev messagesEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return false, err
	}
	if ev.Type == "" {
		ev.Type = name
	}
	*c = streamChunk{}
	switch ev.Type {
	case "message_start":
		// Its output_tokens (Anthropic sends 1) is no count of the answer:
		// message_delta's is; only the prompt is taken here.
		if m := ev.Message; m != nil && m.Usage != nil {
			c.Usage = m.Usage.chat()
			c.Usage.CompletionTokens = 0
		}
	case "content_block_start":
		b := ev.ContentBlock
		switch {
		case b == nil:
		case b.Type == "tool_use":
			// The call's name, a token as chat's first tool-call delta is.
			c.delta().ToolCalls = []json.RawMessage{toolDelta(ev.Index, map[string]any{"name": b.Name})}
		case b.Type == "text" && b.Text != "":
			c.delta().Content = b.Text
		}
	case "content_block_delta":
		if d := ev.Delta; d != nil {
			switch d.Type {
			case "text_delta":
				c.delta().Content = d.Text
			case "thinking_delta":
				c.delta().Reasoning = d.Thinking
			case "input_json_delta":
				if d.PartialJSON != "" {
					c.delta().ToolCalls = []json.RawMessage{toolDelta(ev.Index, map[string]any{"arguments": d.PartialJSON})}
				}
			}
		}
	case "message_delta":
		if d := ev.Delta; d != nil && d.StopReason != "" {
			c.Choices = []choice{{FinishReason: d.StopReason}}
		}
		if ev.Usage != nil {
			c.Usage = ev.Usage.chat()
		}
	case "message_stop":
		return true, nil
	case "error":
		return false, &serverFailure{Event: ev.Type, Message: ev.Error.text()}
	}
	return false, nil
}

// toolDelta is a tool_use block's start or input piece as the chat
// tool_calls element the assembler reads, keyed by the block's index.
func toolDelta(index int, function map[string]any) json.RawMessage {
	raw, _ := json.Marshal(map[string]any{"index": index, "function": function}) // strings and an int always marshal
	return raw
}

// messageAnswer is an unstreamed Messages API answer: the message object.
type messageAnswer struct {
	Type    string `json:"type"`
	Model   string `json:"model"`
	Content []struct {
		Type     string          `json:"type"`
		Text     string          `json:"text"`
		Thinking string          `json:"thinking"`
		Name     string          `json:"name"`
		Input    json.RawMessage `json:"input"`
	} `json:"content"`
	StopReason string         `json:"stop_reason"`
	Usage      *messagesUsage `json:"usage"`
	Error      *messagesError `json:"error"`
}

// readMessage reads an unstreamed Messages API answer: its text, thinking
// and tool_use blocks, its stop reason and usage. An error object, or a
// body of another type, is no answer.
func readMessage(raw []byte, w *answer) error {
	var a messageAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		return notJSON(raw, err)
	}
	switch {
	case a.Type == "error" || a.Error != nil:
		return &answerProblem{Reason: reasonErrorInAnswer, Text: "error in the answer: " + a.Error.text()}
	case a.Type != "message":
		return &answerProblem{Reason: reasonAnswerNoChoices, Text: "the answer is no message object (type " + truncate(fmt.Sprintf("%q", a.Type), 32) + "): " + truncate(string(raw), 64)}
	}
	var text, reasoning strings.Builder
	for _, b := range a.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "thinking":
			reasoning.WriteString(b.Thinking)
		case "tool_use":
			w.ToolCalls = append(w.ToolCalls, wholeToolCall{Name: b.Name, Arguments: string(b.Input)})
		}
	}
	w.Content, w.Reasoning, w.FinishReason, w.Model = text.String(), reasoning.String(), a.StopReason, truncate(a.Model, 128)
	if a.Usage != nil {
		w.usage = usageOrNil(a.Usage.chat())
	}
	return nil
}
