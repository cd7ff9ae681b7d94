package quality

import (
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config"
)

func weatherScenario(t *testing.T, choice any, format *config.ResponseFormat) *config.Scenario {
	t.Helper()
	s := config.DefaultScenario
	s.Tools = []config.Tool{
		{Function: config.Function{Name: "get_weather", Parameters: map[string]any{
			"type": "object", "required": []any{"city", "unit"}, "additionalProperties": false,
			"properties": map[string]any{"city": map[string]any{"type": "string"}, "unit": map[string]any{"enum": []any{"celsius", "fahrenheit"}}},
		}}},
		{Function: config.Function{Name: "ping"}},
	}
	s.ToolChoice, s.ResponseFormat = choice, format
	var errs config.FieldErrors
	s.Validate("s", &errs)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return &s
}

// Each way an answer falls short of its tools, tool_choice and response
// format fails with a reason that names the function and the schema path.
func TestStructured(t *testing.T) {
	ok := ToolCall{Name: "get_weather", Arguments: `{"city": "Paris", "unit": "celsius"}`}
	named := map[string]any{"type": "function", "function": map[string]any{"name": "get_weather"}}
	person := &config.ResponseFormat{Type: "json_schema", JSONSchema: &config.JSONFormat{Name: "p", Schema: map[string]any{
		"type": "object", "required": []any{"name"}, "properties": map[string]any{"name": map[string]any{"type": "string"}}}}}
	for _, tc := range []struct {
		name   string
		choice any
		format *config.ResponseFormat
		answer string
		calls  []ToolCall
		want   string // "" passes; else the reason's start
	}{
		{"a valid call", nil, nil, "", []ToolCall{ok}, ""},
		{"auto: text and no call", nil, nil, "It is sunny.", nil, ""},
		{"a function without parameters takes any JSON", "required", nil, "", []ToolCall{{Name: "ping", Arguments: "{}"}}, ""},
		{"schema violation", nil, nil, "", []ToolCall{{Name: "get_weather", Arguments: `{"city": "Paris", "unit": "kelvin"}`}},
			"tool call get_weather: arguments do not match the schema at /unit: value must be one of 'celsius', 'fahrenheit'"},
		{"missing property", nil, nil, "", []ToolCall{{Name: "get_weather", Arguments: `{"city": "Paris"}`}},
			"tool call get_weather: arguments do not match the schema at /: missing property 'unit'"},
		{"arguments not JSON", nil, nil, "", []ToolCall{{Name: "get_weather", Arguments: `{"city": "Paris", "unit": celsius}`}},
			"tool call get_weather: arguments are not JSON: "},
		{"empty arguments are no JSON", nil, nil, "", []ToolCall{{Name: "ping"}}, "tool call ping: arguments are not JSON: "},
		{"undefined function", nil, nil, "", []ToolCall{{Name: "get_time", Arguments: "{}"}},
			"tool call get_time: no such function in tools (get_weather, ping)"},
		{"undefined function, a name from the server quoted", nil, nil, "", []ToolCall{{Name: "rm -rf\n", Arguments: "{}"}},
			`tool call "rm -rf\n": no such function in tools`},
		{"no name", nil, nil, "", []ToolCall{ok, {Arguments: "{}"}}, "tool call #2 names no function"},
		{"cut arguments", nil, nil, "", []ToolCall{{Name: "get_weather", Arguments: `{"city": "`, Cut: true}}, "tool call get_weather: arguments longer than the 64 KiB kept, not checked"},
		{"required without a call", "required", nil, "It is sunny.", nil, "no tool call under tool_choice required"},
		{"named without a call", named, nil, "It is sunny.", nil, "no tool call, while tool_choice names get_weather"},
		{"named, another called", named, nil, "", []ToolCall{{Name: "ping", Arguments: "{}"}}, "tool call ping, while tool_choice names get_weather"},
		{"none, yet a call", "none", nil, "", []ToolCall{ok}, "tool call get_weather under tool_choice none"},
		{"json_schema format: a match", nil, person, ` {"name": "Ada"} `, nil, ""},
		{"json_schema format: a violation", nil, person, `{"name": 7}`, nil, "answer does not match response_format's schema at /name: got number, want string"},
		{"json_schema format: no JSON", nil, person, `Sure! {"name": "Ada"}`, nil, "answer is not JSON, which response_format json_schema asks for: "},
		{"json_schema format: calls answer instead", nil, person, "", []ToolCall{ok}, ""},
		{"json_object format", nil, &config.ResponseFormat{Type: "json_object"}, `{"a": [1]}`, nil, ""},
		{"json_object format: an array", nil, &config.ResponseFormat{Type: "json_object"}, `[1]`, nil, "answer is not a JSON object, which response_format json_object asks for"},
		{"json_object format: null", nil, &config.ResponseFormat{Type: "json_object"}, `null`, nil, "answer is not a JSON object"},
		{"text format checks nothing", nil, &config.ResponseFormat{Type: "text"}, `Hello`, nil, ""},
	} {
		s := weatherScenario(t, tc.choice, tc.format)
		checked, got := Scenario(s, tc.answer, tc.calls)
		switch {
		case !checked:
			t.Errorf("%s: not checked", tc.name)
		case tc.want == "" && got != "":
			t.Errorf("%s: %q, want a pass", tc.name, got)
		case tc.want != "" && !strings.HasPrefix(got, tc.want):
			t.Errorf("%s: %q, want %q…", tc.name, got, tc.want)
		}
	}
}

// A scenario that asks nothing of its answer is not checked; quality's
// checks follow the structured ones.
func TestScenarioChecks(t *testing.T) {
	s := config.DefaultScenario
	if checked, _ := Scenario(&s, "anything", []ToolCall{{Name: "x"}}); checked {
		t.Error("a scenario without checks was checked")
	}
	s.ResponseFormat = &config.ResponseFormat{Type: "json_object"}
	s.Quality = &config.Quality{Contains: "Ada"}
	var errs config.FieldErrors
	s.Validate("s", &errs)
	for answer, want := range map[string]string{`{"n": "Bob"}`: `answer does not contain "Ada"`, `Ada`: "answer is not a JSON object", `{"n": "Ada"}`: ""} {
		if checked, got := Scenario(&s, answer, nil); !checked || got != want && !strings.HasPrefix(got, want+",") {
			t.Errorf("%s: %v %q, want %q", answer, checked, got, want)
		}
	}
}
