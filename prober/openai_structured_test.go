package prober

import (
	"encoding/json"
	"io"
	"testing"

	"github.com/llmprobe/llmprobe/config"
)

// Tools, tool_choice and the response format go out as each API spells
// them: chat's as the scenario wrote them, the Responses API's flat tools,
// named choice and text.format (beside extra_body's other text settings).
func TestStructuredBody(t *testing.T) {
	strict := true
	s := config.Structured{
		Tools: []config.Tool{{Function: config.Function{Name: "get_weather", Description: "Weather now", Strict: &strict,
			Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}},
		ToolChoice:     map[string]any{"type": "function", "function": map[string]any{"name": "get_weather"}},
		ResponseFormat: &config.ResponseFormat{Type: "json_schema", JSONSchema: &config.JSONFormat{Name: "w", Schema: map[string]any{"type": "object"}, Strict: &strict}},
	}
	sc := config.DefaultScenario
	sc.Structured = s
	var errs config.FieldErrors
	sc.Validate("s", &errs)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, tc := range []struct {
		api   config.API
		extra map[string]any
		want  map[string]string // field -> its JSON
	}{
		{config.APIChat, nil, map[string]string{
			"tools":           `[{"function":{"description":"Weather now","name":"get_weather","parameters":{"properties":{"city":{"type":"string"}},"type":"object"},"strict":true},"type":"function"}]`,
			"tool_choice":     `{"function":{"name":"get_weather"},"type":"function"}`,
			"response_format": `{"json_schema":{"name":"w","schema":{"type":"object"},"strict":true},"type":"json_schema"}`,
			"text":            ``,
		}},
		{config.APIResponses, map[string]any{"text": map[string]any{"verbosity": "low"}}, map[string]string{
			"tools":           `[{"description":"Weather now","name":"get_weather","parameters":{"properties":{"city":{"type":"string"}},"type":"object"},"strict":true,"type":"function"}]`,
			"tool_choice":     `{"name":"get_weather","type":"function"}`,
			"response_format": ``,
			"text":            `{"format":{"name":"w","schema":{"type":"object"},"strict":true,"type":"json_schema"},"verbosity":"low"}`,
		}},
	} {
		b, err := NewBody(BodyRequest{API: tc.api, Model: "m", MaxTokens: 8, Text: "weather?", Extra: tc.extra, Structured: sc.Structured})
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(b.Open())
		var body map[string]json.RawMessage
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Fatal(err)
		}
		for field, want := range tc.want {
			if got := string(body[field]); got != want {
				t.Errorf("%s: %s = %s, want %s", tc.api, field, got, want)
			}
		}
	}

	// A mode is sent as the string it is, in both APIs; no format, no field.
	sc.ToolChoice, sc.ResponseFormat = "required", nil
	sc.Validate("s", &errs)
	for _, api := range []config.API{config.APIChat, config.APIResponses} {
		body := map[string]any{}
		structuredFields(body, &sc.Structured, api == config.APIResponses)
		if body["tool_choice"] != "required" || body["response_format"] != nil || body["text"] != nil {
			t.Errorf("%s: tool_choice %v, response_format %v, text %v", api, body["tool_choice"], body["response_format"], body["text"])
		}
	}
}
