package prober

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/llmprobe/llmprobe/prompt"
)

// responsesFields sets the Responses API's own fields: the output cap, and
// the prompt as input, a string for one turn and the message list for a
// conversation's later turns.
func responsesFields(body map[string]any, maxTokens int, history []prompt.Message, content string) {
	body["max_output_tokens"] = maxTokens
	if len(history) == 0 {
		body["input"] = content
		return
	}
	body["input"] = messages(history, content)
}

// ServerFailure is a failure the server reported inside a stream: a
// Responses API response.failed, response.incomplete or error event.
type ServerFailure struct{ Event, Message string }

func (f *ServerFailure) Error() string {
	if f.Message == "" {
		return f.Event + " event"
	}
	return f.Event + " event: " + f.Message
}

// responsesEvent is the part of a Responses API stream event llmprobe reads:
// one shape for every type, decoded once.
type responsesEvent struct {
	Type     string          `json:"type"`
	Delta    string          `json:"delta"`
	Message  string          `json:"message"`
	Code     any             `json:"code"`
	Response *responseObject `json:"response"`
}

// responseObject is the part of a Responses API response object llmprobe
// reads, in a stream's final event or as an unstreamed answer.
type responseObject struct {
	Status string `json:"status"`
	Error  *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Usage *struct {
		InputTokens        int `json:"input_tokens"`
		OutputTokens       int `json:"output_tokens"`
		InputTokensDetails *struct {
			CachedTokens *int `json:"cached_tokens"`
		} `json:"input_tokens_details"`
		OutputTokensDetails *struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"output_tokens_details"`
	} `json:"usage"`
}

// ResponsesEvent reads one event of a streamed Responses API answer into the
// chat chunk it stands for, so one stream reader measures both: output text
// and refusal deltas are content, reasoning deltas reasoning, function-call
// argument deltas tool calls, and the final response's usage the usage.
// final is true for the event that ends the stream. A failure the server
// reported is a *ServerFailure; anything else that is no event is an error.
// name is the SSE event name, used when data has no type.
func ResponsesEvent(name string, data []byte, c *Chunk) (final bool, err error) {
	var ev responsesEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return false, err
	}
	if ev.Type == "" {
		ev.Type = name
	}
	*c = Chunk{}
	switch ev.Type {
	case "response.output_text.delta", "response.refusal.delta":
		c.delta().Content = ev.Delta
	case "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
		c.delta().Reasoning = ev.Delta
	case "response.function_call_arguments.delta":
		if ev.Delta != "" {
			c.delta().ToolCalls = []json.RawMessage{data}
		}
	case "response.output_item.added", "response.output_item.done", "response.function_call_arguments.done":
		c.ToolItems = []json.RawMessage{data}
	case "error":
		msg := ev.Message
		if ev.Code != nil {
			msg = strings.TrimSpace(fmt.Sprintf("%v: %s", ev.Code, msg))
		}
		return false, &ServerFailure{Event: ev.Type, Message: Truncate(msg, maxMessage)}
	case "response.failed", "response.incomplete", "response.completed":
		return ev.final(c)
	}
	return false, nil
}

// final reads the event that ends the stream. A response cut short by
// max_output_tokens ends as a chat answer with finish_reason "length" does:
// that is the length llmprobe asked for, not a failure.
func (ev *responsesEvent) final(c *Chunk) (bool, error) {
	r := ev.Response
	if r == nil {
		return false, errors.New(ev.Type + " event without its response")
	}
	reason := ""
	if d := r.IncompleteDetails; d != nil {
		reason = d.Reason
	}
	switch {
	case ev.Type == "response.failed":
		msg := "no error given"
		if e := r.Error; e != nil {
			msg = strings.TrimPrefix(e.Code+": "+e.Message, ": ")
		}
		return false, &ServerFailure{Event: ev.Type, Message: Truncate(msg, maxMessage)}
	case ev.Type == "response.incomplete" && reason != "max_output_tokens":
		return false, &ServerFailure{Event: ev.Type, Message: "reason " + Truncate(fmt.Sprintf("%q", reason), maxMessage)}
	}
	c.Choices = []Choice{{FinishReason: r.Status}}
	if reason != "" {
		c.Choices[0].FinishReason = r.Status + " (" + reason + ")"
	}
	if u := r.Usage; u != nil {
		c.Usage = &Usage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens}
		if d := u.OutputTokensDetails; d != nil {
			c.Usage.ReasoningTokens = d.ReasoningTokens
		}
		if d := u.InputTokensDetails; d != nil && d.CachedTokens != nil {
			c.Usage.PromptTokensDetails = &PromptDetails{CachedTokens: d.CachedTokens}
		}
	}
	return true, nil
}

// delta is the chunk's one choice's delta, made on first use.
func (c *Chunk) delta() *Delta {
	if len(c.Choices) == 0 {
		c.Choices = []Choice{{}}
	}
	return &c.Choices[0].Delta
}
