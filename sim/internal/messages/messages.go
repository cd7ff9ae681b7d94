// Package messages writes an Anthropic Messages API answer as llama.cpp and
// vLLM send it: streamed as typed server-sent events, or whole.
package messages

import (
	"encoding/json"
	"strings"
)

// Stream is one answer's events, written in order: Start, then Delta,
// Call and Arguments for the output, then End.
type Stream struct {
	id, model string
	prompt    int
	// The content block open now ("thinking", "text" or "tool_use", "" for
	// none) and its index; the blocks closed before it, for Whole.
	open    string
	index   int
	text    strings.Builder
	content []any
	// A tool_use block's id and name.
	callID, name string
}

// Usage is the answer's token counts: the prompt's, split as the API does
// into tokens its cache read and the rest, and the output's.
type Usage struct {
	Input, CacheRead, Output int
}

// New starts the events of message id, whose prompt has prompt tokens.
func New(id, model string, prompt int) *Stream {
	return &Stream{id: id, model: model, prompt: prompt, index: -1}
}

// Start is message_start, with the prompt's usage and one output token, as
// Anthropic's API counts it there.
func (s *Stream) Start(u *Usage) string {
	msg := s.message(nil, u)
	msg["content"] = []any{}
	if usage, ok := msg["usage"].(map[string]any); ok {
		usage["output_tokens"] = 1
	}
	return event("message_start", map[string]any{"message": msg})
}

// Delta is the events for one output chunk: a thinking or text block
// opened when the kind changes, then the delta.
func (s *Stream) Delta(text string, reasoning bool) string {
	kind, delta := "text", map[string]any{"type": "text_delta", "text": text}
	if reasoning {
		kind, delta = "thinking", map[string]any{"type": "thinking_delta", "thinking": text}
	}
	var out string
	if s.open != kind {
		out = s.closeBlock() + s.openBlock(kind)
	}
	s.text.WriteString(text)
	return out + event("content_block_delta", map[string]any{"index": s.index, "delta": delta})
}

// Call opens a tool_use block for function name.
func (s *Stream) Call(callID, name string) string {
	s.callID, s.name = callID, name
	return s.closeBlock() + s.openBlock("tool_use")
}

// Arguments is a piece of the open tool_use block's input.
func (s *Stream) Arguments(delta string) string {
	s.text.WriteString(delta)
	return event("content_block_delta", map[string]any{"index": s.index, "delta": map[string]any{"type": "input_json_delta", "partial_json": delta}})
}

// End closes the open block, then message_delta with the stop reason of
// finish (an OpenAI finish_reason) and the output's usage (none when u is
// nil), then message_stop.
func (s *Stream) End(finish string, u *Usage) string {
	out := s.closeBlock()
	fields := map[string]any{"delta": map[string]any{"stop_reason": StopReason(finish), "stop_sequence": nil}}
	if u != nil {
		fields["usage"] = map[string]any{"output_tokens": u.Output}
	}
	return out + event("message_delta", fields) + event("message_stop", map[string]any{})
}

// Whole is the message object of an unstreamed answer of the events
// written so far: the open block closed, the stop reason and usage set.
func (s *Stream) Whole(finish string, u *Usage) map[string]any {
	s.closeBlock()
	msg := s.message(StopReason(finish), u)
	msg["content"] = s.content
	return msg
}

// StopReason is the Messages API's name of an OpenAI finish_reason.
func StopReason(finish string) string {
	switch finish {
	case "length":
		return "max_tokens"
	case "tool_calls":
		return "tool_use"
	}
	return "end_turn"
}

func (s *Stream) openBlock(kind string) string {
	s.open, s.index = kind, s.index+1
	s.text.Reset()
	block := map[string]any{"type": kind}
	switch kind {
	case "text":
		block["text"] = ""
	case "thinking":
		block["thinking"] = ""
	case "tool_use":
		block["id"], block["name"], block["input"] = s.callID, s.name, map[string]any{}
	}
	return event("content_block_start", map[string]any{"index": s.index, "content_block": block})
}

// closeBlock ends the open block and keeps it whole for Whole; nothing
// when none is open.
func (s *Stream) closeBlock() string {
	if s.open == "" {
		return ""
	}
	text := s.text.String()
	block := map[string]any{"type": s.open}
	switch s.open {
	case "text":
		block["text"] = text
	case "thinking":
		block["thinking"], block["signature"] = text, ""
	case "tool_use":
		// An input that is no JSON (a fault's) goes as a string, still broken.
		var input any = text
		if json.Valid([]byte(text)) {
			input = json.RawMessage(text)
		}
		block["id"], block["name"], block["input"] = s.callID, s.name, input
	}
	s.content = append(s.content, block)
	s.open = ""
	return event("content_block_stop", map[string]any{"index": s.index})
}

func (s *Stream) message(stop any, u *Usage) map[string]any {
	msg := map[string]any{"id": "msg_" + s.id, "type": "message", "role": "assistant", "model": s.model,
		"stop_reason": stop, "stop_sequence": nil, "usage": nil}
	if u != nil {
		msg["usage"] = map[string]any{"input_tokens": u.Input, "cache_read_input_tokens": u.CacheRead, "output_tokens": u.Output}
	}
	return msg
}

// event is one SSE event: its type as the event name and in the data.
func event(typ string, fields map[string]any) string {
	fields["type"] = typ
	b, _ := json.Marshal(fields) // maps of strings, numbers and valid JSON always marshal
	return "event: " + typ + "\ndata: " + string(b) + "\n\n"
}
