package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/sim/internal/persona"
)

const weatherTools = `,"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","required":["city","unit"],` +
	`"properties":{"city":{"type":"string"},"unit":{"enum":["celsius","fahrenheit"]}}}}},{"type":"function","function":{"name":"ping"}}]`

type toolDelta struct {
	Index    int     `json:"index"`
	ID       *string `json:"id"`
	Type     *string `json:"type"`
	Function struct {
		Name      *string `json:"name"`
		Arguments *string `json:"arguments"`
	} `json:"function"`
}

// readCalls reads a chat stream's tool_calls deltas: the deltas of each
// call by index, the finish reason and the usage's completion tokens.
func readCalls(t *testing.T, events []string) (calls map[int][]toolDelta, finish string, completion int) {
	t.Helper()
	calls = map[int][]toolDelta{}
	for _, data := range events {
		if data == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					ToolCalls []toolDelta `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		for _, ch := range c.Choices {
			for _, d := range ch.Delta.ToolCalls {
				calls[d.Index] = append(calls[d.Index], d)
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
		if c.Usage != nil {
			completion = c.Usage.CompletionTokens
		}
	}
	return calls, finish, completion
}

// With tools, the sim calls a function (the named one, else the first):
// its name first (alone as vLLM sends it, with empty arguments as
// llama.cpp does), then its arguments in token-sized pieces that make JSON
// matching the function's parameters; finish_reason tool_calls; each
// piece and the name one output token in usage.
func TestToolCallStream(t *testing.T) {
	for _, engine := range []string{"", persona.LlamaCPP} {
		_, srv := start(t, func(c *Config) { c.Engine = engine })
		for choice, want := range map[string]string{"": "get_weather", `,"tool_choice":"required"`: "get_weather", `,"tool_choice":{"type":"function","function":{"name":"ping"}}`: "ping"} {
			s := stream(t, srv.URL, "/v1/chat/completions", chatBody(64, `,"stream_options":{"include_usage":true}`+weatherTools+choice))
			calls, finish, completion := readCalls(t, s.events)
			deltas := calls[0]
			if text, _ := contentOf(t, s.events); text != "" {
				t.Errorf("%s%s: content %q beside the calls", engine, choice, text)
			}
			if s.status != 200 || len(calls) != 1 || len(deltas) < 3 && want == "get_weather" || finish != "tool_calls" || completion != len(deltas) {
				t.Fatalf("%s%s: status %d, %d calls, %d deltas, finish %q, %d completion tokens", engine, choice, s.status, len(calls), len(deltas), finish, completion)
			}
			first := deltas[0]
			if first.ID == nil || *first.Type != "function" || *first.Function.Name != want || (first.Function.Arguments != nil) != (engine == persona.LlamaCPP) {
				t.Errorf("%s%s: first delta %+v", engine, choice, first)
			}
			var args strings.Builder
			for _, d := range deltas[1:] {
				if d.ID != nil || d.Function.Name != nil || d.Function.Arguments == nil {
					t.Errorf("%s%s: a later delta %+v", engine, choice, d)
					continue
				}
				args.WriteString(*d.Function.Arguments)
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(args.String()), &v); err != nil {
				t.Fatalf("%s%s: arguments %q: %v", engine, choice, args.String(), err)
			}
			if unit := v["unit"]; want == "get_weather" && (v["city"] == nil || unit != "celsius" && unit != "fahrenheit") {
				t.Errorf("%s%s: arguments %v", engine, choice, v)
			}
		}
	}
}

// tool_choice none, a text format and no shape asked are plain text; a
// json_schema format streams an instance of its schema as content; an
// answer longer than max_tokens is cut as any answer is.
func TestShapedText(t *testing.T) {
	_, srv := start(t, nil)
	schema := `,"response_format":{"type":"json_schema","json_schema":{"name":"p","schema":{"type":"object","required":["name","age"],"properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0}}}}}`
	for extra, want := range map[string]string{
		weatherTools + `,"tool_choice":"none"`:      "length",
		`,"response_format":{"type":"text"}`:        "length",
		schema:                                      "stop",
		`,"response_format":{"type":"json_object"}`: "stop",
	} {
		s := stream(t, srv.URL, "/v1/chat/completions", chatBody(32, extra))
		text, finish := contentOf(t, s.events)
		var v map[string]any
		isJSON := json.Unmarshal([]byte(text), &v) == nil
		if finish != want || isJSON != (want == "stop") || extra == schema && (v["name"] == nil || v["age"] == nil) {
			t.Errorf("%s: %q, finish %q", extra, text, finish)
		}
	}
	if text, finish := contentOf(t, stream(t, srv.URL, "/v1/chat/completions", chatBody(3, schema)).events); finish != "length" || json.Valid([]byte(text)) {
		t.Errorf("cut at 3 tokens: %q, finish %q", text, finish)
	}
}

func contentOf(t *testing.T, events []string) (text, finish string) {
	t.Helper()
	for _, data := range events {
		var c struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if data != "[DONE]" && json.Unmarshal([]byte(data), &c) == nil {
			for _, ch := range c.Choices {
				text += ch.Delta.Content
				if ch.FinishReason != nil {
					finish = *ch.FinishReason
				}
			}
		}
	}
	return text, finish
}

// The Responses API's function call: a function_call item added with its
// name, argument deltas, their done event with the whole arguments, the
// item done, and response.completed listing the call.
func TestResponsesToolCall(t *testing.T) {
	_, srv := start(t, nil)
	tools := `"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","required":["city"],"properties":{"city":{"type":"string"}}}}]`
	s := stream(t, srv.URL, "/v1/responses", `{"model":"m","stream":true,"max_output_tokens":50,"input":"weather?",`+tools+`,"tool_choice":"required"}`)
	var types []string
	var deltas, done string
	var final map[string]any
	for _, data := range s.events {
		var ev struct {
			Type      string         `json:"type"`
			Delta     string         `json:"delta"`
			Arguments string         `json:"arguments"`
			Item      map[string]any `json:"item"`
			Response  map[string]any `json:"response"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatal(err)
		}
		types = append(types, ev.Type)
		switch ev.Type {
		case "response.output_item.added":
			if ev.Item["type"] != "function_call" || ev.Item["name"] != "get_weather" {
				t.Errorf("item added %v", ev.Item)
			}
		case "response.function_call_arguments.delta":
			deltas += ev.Delta
		case "response.function_call_arguments.done":
			done = ev.Arguments
		case "response.completed":
			final = ev.Response
		}
	}
	got := strings.Join(types, " ")
	if !strings.HasPrefix(got, "response.created response.in_progress response.output_item.added response.function_call_arguments.delta") ||
		!strings.HasSuffix(got, "response.function_call_arguments.delta response.function_call_arguments.done response.output_item.done response.completed") {
		t.Errorf("events: %s", got)
	}
	if done == "" || deltas != done || !json.Valid([]byte(done)) {
		t.Errorf("deltas %q, done %q", deltas, done)
	}
	out, _ := final["output"].([]any)
	usage, _ := final["usage"].(map[string]any)
	if len(out) != 1 || out[0].(map[string]any)["arguments"] != done || usage["output_tokens"] != float64(strings.Count(got, "arguments.delta")+1) {
		t.Errorf("completed: output %v, usage %v", out, usage)
	}
}

// An unstreamed chat answer carries its calls whole in message.tool_calls.
func TestToolCallWhole(t *testing.T) {
	_, srv := start(t, nil)
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(strings.Replace(chatBody(64, weatherTools), `"stream":true`, `"stream":false`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var body struct {
		Choices []struct {
			Message struct {
				Content   *string `json:"content"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(raw, &body); err != nil || len(body.Choices) != 1 {
		t.Fatalf("%s: %v", raw, err)
	}
	c := body.Choices[0]
	if c.FinishReason != "tool_calls" || c.Message.Content != nil || len(c.Message.ToolCalls) != 1 || c.Message.ToolCalls[0].Function.Name != "get_weather" || !json.Valid([]byte(c.Message.ToolCalls[0].Function.Arguments)) {
		t.Errorf("%s", raw)
	}
}

// The faults hostile tests ask for break what they say, and only that.
func TestShapedFaults(t *testing.T) {
	for fault, check := range map[string]func(name, args, text string) bool{
		"arguments_not_json": func(name, args, _ string) bool { return name == "get_weather" && !json.Valid([]byte(args)) },
		"arguments_invalid": func(name, args, _ string) bool {
			var v map[string]any
			err := json.Unmarshal([]byte(args), &v)
			_, isString := v["city"].(string)
			return name == "get_weather" && err == nil && !isString
		},
		"undefined_function": func(name, args, _ string) bool { return name == "get_weather_v2" && json.Valid([]byte(args)) },
		"no_tool_call":       func(name, _, text string) bool { return name == "" && text != "" },
	} {
		_, srv := start(t, func(c *Config) { c.Faults.Shaped = fault })
		s := stream(t, srv.URL, "/v1/chat/completions", chatBody(64, weatherTools+`,"tool_choice":"required"`))
		calls, _, _ := readCalls(t, s.events)
		var name, args string
		for _, d := range calls[0] {
			if d.Function.Name != nil {
				name = *d.Function.Name
			}
			if d.Function.Arguments != nil {
				args += *d.Function.Arguments
			}
		}
		text, _ := contentOf(t, s.events)
		if !check(name, args, text) {
			t.Errorf("%s: call %q %q, text %q", fault, name, args, text)
		}
	}
	_, srv := start(t, func(c *Config) { c.Faults.Shaped = "format_violation" })
	text, _ := contentOf(t, stream(t, srv.URL, "/v1/chat/completions", chatBody(64, `,"response_format":{"type":"json_schema","json_schema":{"name":"p","schema":{"type":"object","required":["age"],"properties":{"age":{"type":"integer"}}}}}`)).events)
	var v map[string]any
	err := json.Unmarshal([]byte(text), &v)
	if _, isNumber := v["age"].(float64); err != nil || v["age"] == nil || isNumber {
		t.Errorf("format violation: %q, want an object whose age is no number", text)
	}
	if _, err := New(Config{Model: "m", MaxBatch: 1, DefaultMaxTokens: 1, Faults: Faults{Shaped: "sometimes"}}); err == nil || !strings.Contains(err.Error(), `shaped "sometimes" must be one of`) {
		t.Errorf("an unknown fault: %v", err)
	}
}
