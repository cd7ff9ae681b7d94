package sim

import (
	"encoding/json"
	"strings"
	"testing"
)

// /v1/responses streams typed events in order: every event's type is its
// name, sequence numbers count up from 0, reasoning deltas come before the
// text deltas, and response.completed carries the usage of the messages sent.
func TestResponsesEvents(t *testing.T) {
	_, srv := start(t, func(c *Config) { c.Faults.ReasoningTokens = 2 })
	body := `{"model":"m","stream":true,"max_output_tokens":5,"input":[{"role":"user","content":"one two three"},{"role":"assistant","content":"four"},{"role":"user","content":"five"}]}`
	s := stream(t, srv.URL, "/v1/responses", body)
	if s.status != 200 || s.err != nil {
		t.Fatalf("status %d, %v", s.status, s.err)
	}
	var types []string
	var last map[string]any
	for i, data := range s.events {
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %d %q: %v", i, data, err)
		}
		if ev["sequence_number"] != float64(i) {
			t.Errorf("event %d has sequence_number %v", i, ev["sequence_number"])
		}
		types = append(types, ev["type"].(string))
		last = ev
	}
	got := strings.Join(types, " ")
	for _, want := range []string{
		"response.created response.in_progress response.output_item.added response.content_part.added response.reasoning_text.delta response.reasoning_text.delta response.reasoning_text.done",
		"response.output_text.delta response.output_text.delta response.output_text.delta response.output_text.done response.content_part.done response.output_item.done response.completed",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("events %s\nlack %s", got, want)
		}
	}
	usage := last["response"].(map[string]any)["usage"].(map[string]any)
	// Three messages of 3, 1 and 1 words, each with the chat template's 4 tokens.
	if usage["input_tokens"] != 17.0 || usage["output_tokens"] != 5.0 || usage["output_tokens_details"].(map[string]any)["reasoning_tokens"] != 2.0 {
		t.Errorf("usage %v: want 17 input, 5 output, 2 reasoning tokens", usage)
	}
	for body, want := range map[string]int{
		`{"model":"m","stream":true,"max_output_tokens":5,"input":{"a":1}}`: 400,
		`{"model":"m","stream":true,"max_output_tokens":5}`:                 400,
	} {
		if s := stream(t, srv.URL, "/v1/responses", body); s.status != want {
			t.Errorf("%s: %d, want %d", body, s.status, want)
		}
	}
}
