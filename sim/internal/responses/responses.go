// Package responses writes an OpenAI Responses API answer as vLLM and
// OpenAI send it: streamed as typed server-sent events, or whole.
package responses

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Stream is one answer's events, written in order: Start, Delta for each
// output chunk, then End.
type Stream struct {
	id, model string
	created   int64
	seq       int
	// The output item open now ("message" or "reasoning"), and the items
	// closed before it, for the final response.
	open   string
	text   strings.Builder
	output []any
	// A function_call item's call id and function name.
	callID, name string
}

// Usage is the final response's token counts.
type Usage struct {
	Input, Output, Reasoning int
	// Cached is the prompt tokens the prefix cache served, nil when the
	// engine does not report it.
	Cached *int
}

// New starts the events of the response id.
func New(id, model string, created int64) *Stream {
	return &Stream{id: id, model: model, created: created}
}

// Start is the events that open the stream: created, then in progress.
func (s *Stream) Start() string {
	return s.event("response.created", map[string]any{"response": s.response("in_progress", nil)}) +
		s.event("response.in_progress", map[string]any{"response": s.response("in_progress", nil)})
}

// Delta is the events for one output chunk: its item opened when the kind
// changes (reasoning comes before the message), then the delta.
func (s *Stream) Delta(text string, reasoning bool) string {
	kind, typ := "message", "response.output_text.delta"
	if reasoning {
		kind, typ = "reasoning", "response.reasoning_text.delta"
	}
	var out string
	if s.open != kind {
		out = s.closeItem() + s.openItem(kind)
	}
	s.text.WriteString(text)
	return out + s.event(typ, map[string]any{"item_id": s.itemID(), "output_index": len(s.output), "content_index": 0, "delta": text, "logprobs": []any{}})
}

// End is the events that close the stream: the open item's done events,
// then response.completed with the usage (null when u is nil).
func (s *Stream) End(u *Usage) string {
	out := s.closeItem()
	return out + s.event("response.completed", map[string]any{"response": s.response("completed", u.fields())})
}

// Whole is the response object of an unstreamed answer (stream: false):
// what a stream's response.completed carries, its reasoning item first
// when there is reasoning.
func Whole(id, model string, created int64, reasoning, text string, u *Usage) map[string]any {
	s := New(id, model, created)
	if reasoning != "" {
		s.Delta(reasoning, true)
	}
	s.Delta(text, false)
	return s.Final(u)
}

// Final is the response object once the events written so far are done:
// the open item closed, the usage (null when u is nil) added. An
// unstreamed answer of function calls is the calls' events, then Final.
func (s *Stream) Final(u *Usage) map[string]any {
	s.closeItem()
	return s.response("completed", u.fields())
}

// fields is the usage as the response object writes it, nil for none.
func (u *Usage) fields() map[string]any {
	if u == nil {
		return nil
	}
	usage := map[string]any{
		"input_tokens": u.Input, "output_tokens": u.Output, "total_tokens": u.Input + u.Output,
		"input_tokens_details":  map[string]any{"cached_tokens": u.Cached},
		"output_tokens_details": map[string]any{"reasoning_tokens": u.Reasoning},
	}
	if u.Cached == nil {
		usage["input_tokens_details"] = nil
	}
	return usage
}

// Call is the events that open a function_call item: the item before it
// closed, then the new one added with the function's name.
func (s *Stream) Call(callID, name string) string {
	out := s.closeItem()
	s.open, s.callID, s.name = "function_call", callID, name
	s.text.Reset()
	return out + s.event("response.output_item.added", map[string]any{"output_index": len(s.output), "item": s.item("in_progress", "")})
}

// Arguments is the event of a piece of the open function call's arguments.
func (s *Stream) Arguments(delta string) string {
	s.text.WriteString(delta)
	return s.event("response.function_call_arguments.delta", map[string]any{"item_id": s.itemID(), "output_index": len(s.output), "delta": delta})
}

func (s *Stream) itemID() string { return fmt.Sprintf("%s_%s_%d", s.open, s.id, len(s.output)) }

func (s *Stream) openItem(kind string) string {
	s.open = kind
	s.text.Reset()
	out := s.event("response.output_item.added", map[string]any{"output_index": len(s.output), "item": s.item("in_progress", "")})
	return out + s.event("response.content_part.added", map[string]any{"item_id": s.itemID(), "output_index": len(s.output), "content_index": 0, "part": s.part("")})
}

// closeItem writes the open item's done events and keeps it for the final
// response; nothing when no item is open.
func (s *Stream) closeItem() string {
	if s.open == "" {
		return ""
	}
	text, idx := s.text.String(), len(s.output)
	if s.open == "function_call" {
		item := s.item("completed", text)
		out := s.event("response.function_call_arguments.done", map[string]any{"item_id": s.itemID(), "output_index": idx, "arguments": text}) +
			s.event("response.output_item.done", map[string]any{"output_index": idx, "item": item})
		s.output = append(s.output, item)
		s.open = ""
		return out
	}
	done := "response.output_text.done"
	if s.open == "reasoning" {
		done = "response.reasoning_text.done"
	}
	out := s.event(done, map[string]any{"item_id": s.itemID(), "output_index": idx, "content_index": 0, "text": text}) +
		s.event("response.content_part.done", map[string]any{"item_id": s.itemID(), "output_index": idx, "content_index": 0, "part": s.part(text)})
	item := s.item("completed", text)
	out += s.event("response.output_item.done", map[string]any{"output_index": idx, "item": item})
	s.output = append(s.output, item)
	s.open = ""
	return out
}

func (s *Stream) item(status, text string) map[string]any {
	if s.open == "function_call" {
		return map[string]any{"id": s.itemID(), "type": "function_call", "status": status, "call_id": s.callID, "name": s.name, "arguments": text}
	}
	item := map[string]any{"id": s.itemID(), "type": s.open, "status": status, "content": []any{}}
	if s.open == "message" {
		item["role"] = "assistant"
	}
	if text != "" {
		item["content"] = []any{s.part(text)}
	}
	return item
}

func (s *Stream) part(text string) map[string]any {
	if s.open == "reasoning" {
		return map[string]any{"type": "reasoning_text", "text": text}
	}
	return map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
}

func (s *Stream) response(status string, usage map[string]any) map[string]any {
	output := s.output
	if output == nil {
		output = []any{}
	}
	return map[string]any{"id": "resp_" + s.id, "object": "response", "created_at": s.created, "model": s.model,
		"status": status, "output": output, "usage": usage, "error": nil, "incomplete_details": nil}
}

// event is one SSE event: its type as the event name and in the data.
func (s *Stream) event(typ string, fields map[string]any) string {
	fields["type"] = typ
	fields["sequence_number"] = s.seq
	s.seq++
	b, _ := json.Marshal(fields) // maps of strings and numbers always marshal
	return "event: " + typ + "\ndata: " + string(b) + "\n\n"
}
