package prober

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/quality"
	"github.com/llmprobe/llmprobe/sim"
)

var weatherParameters = map[string]any{
	"type": "object", "required": []any{"city", "unit"}, "additionalProperties": false,
	"properties": map[string]any{"city": map[string]any{"type": "string"}, "unit": map[string]any{"enum": []any{"celsius", "fahrenheit"}}},
}

// toolScenario is testkit's scenario with tool get_weather (and ping) and
// tool_choice choice, validated as a load validates it.
func toolScenario(t *testing.T, choice any) config.Scenario {
	t.Helper()
	s := testkit.Scenario()
	s.OutputTokens = config.Distribution{Kind: config.DistFixed, Value: 64}
	s.Tools = []config.Tool{{Function: config.Function{Name: "get_weather", Parameters: weatherParameters}}, {Function: config.Function{Name: "ping"}}}
	s.ToolChoice = choice
	return validated(t, s)
}

// formatScenario asks for a JSON person, and checks it with quality's schema too.
func formatScenario(t *testing.T) config.Scenario {
	t.Helper()
	person := map[string]any{"type": "object", "required": []any{"name", "age"},
		"properties": map[string]any{"name": map[string]any{"type": "string"}, "age": map[string]any{"type": "integer", "minimum": 0}}}
	s := testkit.Scenario()
	s.OutputTokens = config.Distribution{Kind: config.DistFixed, Value: 64}
	s.ResponseFormat = &config.ResponseFormat{Type: config.FormatJSONSchema, JSONSchema: &config.JSONFormat{Name: "person", Schema: person}}
	s.Quality = &config.Quality{JSONSchema: person}
	return validated(t, s)
}

func validated(t *testing.T, s config.Scenario) config.Scenario {
	t.Helper()
	var errs config.FieldErrors
	s.Validate("s", &errs)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return s
}

// Against the sim, in the three APIs and both engines' spellings of a call: the
// call is assembled whole (its name, JSON arguments that match the
// schema), the first tool-call delta is the first token and comes before
// the end, usage counts the call's tokens, and the check passes.
func TestToolCallsAgainstSim(t *testing.T) {
	for _, engine := range []string{"", sim.EngineLlamaCPP} {
		srv, _ := testkit.StartSim(t, func(c *sim.Config) { c.Engine = engine })
		for _, api := range []config.API{config.APIChat, config.APIResponses, config.APIMessages} {
			res := probeOnce(t, testkit.Target(srv.URL, api), toolScenario(t, "required"))
			name := string(api) + "/" + engine
			if res.Outcome != OutcomeSuccess || res.Quality == nil || !res.Quality.Passed || !res.Good {
				t.Fatalf("%s: %s %s, quality %+v, good %v\n%s", name, res.Outcome, res.Error, res.Quality, res.Good, logOf(res))
			}
			if len(res.ToolCalls) != 1 || res.ToolCalls[0].Name != "get_weather" {
				t.Fatalf("%s: calls %+v", name, res.ToolCalls)
			}
			var args map[string]any
			if err := json.Unmarshal([]byte(res.ToolCalls[0].Arguments), &args); err != nil || args["city"] == nil {
				t.Errorf("%s: arguments %q: %v", name, res.ToolCalls[0].Arguments, err)
			}
			if res.TTFTool <= 0 || res.TTFTool > res.E2E || res.TTFTool != res.TTFT {
				t.Errorf("%s: first tool-call delta at %s, TTFT %s, e2e %s", name, res.TTFTool, res.TTFT, res.E2E)
			}
			if res.TokenSource != TokensFromUsage || res.OutputTokens < 3 || res.FinishReason == "length" || res.Answer != "" {
				t.Errorf("%s: %d tokens from %s, finish %q, answer %q", name, res.OutputTokens, res.TokenSource, res.FinishReason, res.Answer)
			}
			if !strings.Contains(logOf(res), "tool call get_weather: ") {
				t.Errorf("%s: the log does not show the call:\n%s", name, logOf(res))
			}
		}
	}
}

// A response format asked of the sim gets JSON that matches it, in both APIs.
func TestResponseFormatAgainstSim(t *testing.T) {
	srv, _ := testkit.StartSim(t, nil)
	for _, api := range []config.API{config.APIChat, config.APIResponses} {
		res := probeOnce(t, testkit.Target(srv.URL, api), formatScenario(t))
		if res.Outcome != OutcomeSuccess || res.Quality == nil || !res.Quality.Passed || !res.Good || !json.Valid([]byte(res.Answer)) {
			t.Errorf("%s: %s %s, quality %+v, answer %q\n%s", api, res.Outcome, res.Error, res.Quality, res.Answer, logOf(res))
		}
		if res.TTFTool != 0 || len(res.ToolCalls) != 0 {
			t.Errorf("%s: a text answer has tool calls %v at %s", api, res.ToolCalls, res.TTFTool)
		}
	}
}

// Hostile answers (item 10): each succeeds as a request, fails its check
// with a reason that names the function and the schema path, and is not
// good.
func TestHostileStructuredAnswers(t *testing.T) {
	for _, tc := range []struct {
		fault  string
		choice any
		api    config.API
		format bool
		want   string
	}{
		{"arguments_not_json", "required", config.APIChat, false, "tool call get_weather: arguments are not JSON: "},
		{"arguments_not_json", "required", config.APIResponses, false, "tool call get_weather: arguments are not JSON: "},
		{"arguments_not_json", "required", config.APIMessages, false, "tool call get_weather: arguments are not JSON: "},
		{"arguments_invalid", nil, config.APIMessages, false, "tool call get_weather: arguments do not match the schema at /city: got number, want string"},
		{"undefined_function", nil, config.APIMessages, false, "tool call get_weather_v2: no such function in tools (get_weather, ping)"},
		{"no_tool_call", "required", config.APIMessages, false, "no tool call under tool_choice required"},
		{"arguments_invalid", nil, config.APIChat, false, "tool call get_weather: arguments do not match the schema at /city: got number, want string"},
		{"arguments_invalid", nil, config.APIResponses, false, "tool call get_weather: arguments do not match the schema at /city: got number, want string"},
		{"undefined_function", nil, config.APIChat, false, "tool call get_weather_v2: no such function in tools (get_weather, ping)"},
		{"no_tool_call", "required", config.APIChat, false, "no tool call under tool_choice required"},
		{"no_tool_call", map[string]any{"type": "function", "function": map[string]any{"name": "get_weather"}}, config.APIResponses, false, "no tool call, while tool_choice names get_weather"},
		{"format_violation", nil, config.APIChat, true, "answer does not match response_format's schema at /"},
		{"format_violation", nil, config.APIResponses, true, "answer does not match response_format's schema at /"},
	} {
		name := tc.fault + "/" + string(tc.api)
		srv, _ := testkit.StartSim(t, func(c *sim.Config) { c.Faults.Shaped = tc.fault })
		s := toolScenario(t, tc.choice)
		if tc.format {
			s = formatScenario(t)
			s.Quality = nil // the format's own check, without quality's
		}
		res := probeOnce(t, testkit.Target(srv.URL, tc.api), s)
		if res.Outcome != OutcomeSuccess || res.Good || res.Quality == nil || res.Quality.Passed || !strings.HasPrefix(res.Quality.Reason, tc.want) {
			t.Errorf("%s: %s, good %v, quality %+v; want a failed check %q…\n%s", name, res.Outcome, res.Good, res.Quality, tc.want, logOf(res))
			continue
		}
		if !strings.Contains(logOf(res), "answer check failed: "+tc.want) {
			t.Errorf("%s: the log does not say why the check failed:\n%s", name, logOf(res))
		}
	}
}

// Real engines' tool-call streams (see each file's .source): the call is
// assembled whole from its deltas, its first delta is the first token,
// an empty argument piece is no token, N comes from usage, and the
// arguments pass the function's schema.
func TestToolCallTranscripts(t *testing.T) {
	const gap = 20 * time.Millisecond
	for _, tc := range []struct {
		file             string
		function         string
		parameters       map[string]any
		arguments        string
		firstOutputEvent int // 0-based
		chunks, tokens   int
	}{
		// the name alone, five pieces, an empty piece on the finish chunk; running usage.
		{"vllm-chat-toolcall.sse", "searchGoogle", map[string]any{"type": "object", "required": []any{"query"}, "properties": map[string]any{"query": map[string]any{"type": "string"}}},
			`{"query": "latest news on ai"}`, 1, 6, 20},
		// synthetic in llama.cpp's framing: the name with empty arguments, ten pieces, a finish chunk, usage with timings.
		{"llamacpp-chat-toolcall.sse", "get_weather", weatherParameters, `{"city":"Paris","unit":"celsius"}`, 1, 11, 24},
	} {
		t.Run(tc.file, func(t *testing.T) {
			srv := replay(t, loadTranscript(t, tc.file), gap)
			s := testkit.Scenario()
			s.OutputTokens = config.Distribution{Kind: config.DistFixed, Value: 64}
			s.Tools = []config.Tool{{Function: config.Function{Name: tc.function, Parameters: tc.parameters}}}
			s.ToolChoice = "required"
			res := probeOnce(t, testkit.Target(srv.URL, config.APIChat), validated(t, s))
			if res.Outcome != OutcomeSuccess || res.Quality == nil || !res.Quality.Passed || !res.Good {
				t.Fatalf("%s %s, quality %+v\n%s", res.Outcome, res.Error, res.Quality, logOf(res))
			}
			if len(res.ToolCalls) != 1 || res.ToolCalls[0] != (quality.ToolCall{Name: tc.function, Arguments: tc.arguments}) {
				t.Errorf("calls %+v, want %s(%s)", res.ToolCalls, tc.function, tc.arguments)
			}
			lo := time.Duration(tc.firstOutputEvent+1) * gap
			if res.TTFTool != res.TTFT || res.TTFT < lo || res.TTFT >= lo+gap {
				t.Errorf("first tool-call delta %s, TTFT %s: want both within [%s, %s)", res.TTFTool, res.TTFT, lo, lo+gap)
			}
			if res.OutputChunks != tc.chunks || res.OutputTokens != tc.tokens || res.TokenSource != TokensFromUsage || res.FinishReason != "tool_calls" {
				t.Errorf("%d chunks, %d tokens from %s, finish %q; want %d, %d from usage, tool_calls", res.OutputChunks, res.OutputTokens, res.TokenSource, res.FinishReason, tc.chunks, tc.tokens)
			}
		})
	}
}
