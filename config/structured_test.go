package config

import (
	"testing"
)

// Validate reads tool_choice and compiles every schema a scenario holds;
// a scenario without tools has no choice.
func TestStructuredValidate(t *testing.T) {
	weather := map[string]any{"type": "object", "required": []any{"city"}, "properties": map[string]any{"city": map[string]any{"type": "string"}}}
	for _, tc := range []struct {
		choice     any
		mode, name string
	}{
		{nil, ChoiceAuto, ""},
		{"none", ChoiceNone, ""},
		{"required", ChoiceRequired, ""},
		{map[string]any{"type": "function", "function": map[string]any{"name": "lookup"}}, ChoiceFunction, "lookup"},
	} {
		s := DefaultScenario
		s.Tools = []Tool{{Function: Function{Name: "get_weather", Parameters: weather}}, {Function: Function{Name: "lookup"}}}
		s.ToolChoice = tc.choice
		var errs FieldErrors
		s.Validate("s", &errs)
		if len(errs) > 0 {
			t.Fatalf("%v: %v", tc.choice, errs)
		}
		if mode, name := s.Choice(); mode != tc.mode || name != tc.name {
			t.Errorf("%v: choice %q %q, want %q %q", tc.choice, mode, name, tc.mode, tc.name)
		}
		if s.Tools[0].Type != "function" || s.Function("get_weather").Schema() == nil || s.Function("lookup").Schema() != nil || s.Function("nope") != nil {
			t.Errorf("%v: type %q, schemas %v %v", tc.choice, s.Tools[0].Type, s.Function("get_weather").Schema(), s.Function("lookup").Schema())
		}
		if s.ChecksAnswer() {
			t.Errorf("%v: tools alone check the answer's text", tc.choice)
		}
	}

	s := DefaultScenario
	s.ResponseFormat = &ResponseFormat{Type: FormatJSONSchema, JSONSchema: &JSONFormat{Name: "weather", Schema: weather}}
	var errs FieldErrors
	s.Validate("s", &errs)
	if mode, _ := s.Choice(); len(errs) > 0 || mode != "" || s.ResponseFormat.Schema() == nil || !s.ChecksAnswer() {
		t.Errorf("response format: errors %v, choice %q, schema %v, checked %v", errs, mode, s.ResponseFormat.Schema(), s.ChecksAnswer())
	}
	if err := s.ResponseFormat.Schema().Validate(`{"city": 7}`); err == nil || err.Error() != "at /city: got number, want string" {
		t.Errorf("the compiled format's check: %v", err)
	}
	s.ResponseFormat = &ResponseFormat{Type: FormatText}
	s.Validate("s", &errs)
	if len(errs) > 0 || s.ChecksAnswer() {
		t.Errorf("text format: errors %v, checked %v", errs, s.ChecksAnswer())
	}
}
