package testkit

import "fmt"

// QualityFault is an answer that comes whole and in time but is wrong: a
// tool call or a JSON answer that fails its check. The request succeeds,
// is not good, counts as a failed quality check, and its log says why:
// the quality half of the failure catalogue, which the daemon's and the
// gate's tests run against the sim.
type QualityFault struct {
	Name string
	// Shaped is the sim's fault (sim.Faults.Shaped) that makes the answer.
	Shaped string
	// API is the target's: chat or responses.
	API string
	// Scenario is the scenario's fields that ask for the answer's shape.
	Scenario string
	// Reason is the start of the failed check's reason.
	Reason string
}

// WeatherTool and PersonFormat are scenario fields that ask for a call of
// get_weather(city, unit), and for a JSON person with an integer age.
const (
	WeatherTool = `tools: [{type: function, function: {name: get_weather, description: "The weather now", ` +
		`parameters: {type: object, required: [city, unit], properties: {city: {type: string}, unit: {enum: [celsius, fahrenheit]}}}}}]`
	PersonFormat = `response_format: {type: json_schema, json_schema: {name: person, schema: {type: object, required: [age], properties: {age: {type: integer}}}}}`
)

// QualityFaults is the catalogue's wrong answers.
func QualityFaults() []QualityFault {
	return []QualityFault{
		{"tool arguments not JSON", "arguments_not_json", "chat", WeatherTool + ", tool_choice: required", "tool call get_weather: arguments are not JSON: "},
		{"tool arguments that break the schema", "arguments_invalid", "responses", WeatherTool, "tool call get_weather: arguments do not match the schema at /city: got number, want string"},
		{"a call of an undefined function", "undefined_function", "chat", WeatherTool, "tool call get_weather_v2: no such function in tools (get_weather)"},
		{"no call under tool_choice required", "no_tool_call", "chat", WeatherTool + ", tool_choice: required", "no tool call under tool_choice required"},
		{"an answer that breaks its response format", "format_violation", "chat", PersonFormat, "answer does not match response_format's schema at /age: "},
	}
}

// QualityConfig is a configuration of target "faulty" (the sim at url) with
// scenario "s" asking for f's shape, canaries every 200 ms, and burst
// "catalogue" of six requests, which count their error budget (slo_rule
// point): six cannot show 90 % met by interval.
func QualityConfig(f QualityFault, url string) string {
	return fmt.Sprintf(`targets:
  - {name: faulty, url: %q, model: m, api: %s, timeout: 2s}
scenarios:
  - {name: s, prompt_tokens: 8, output_tokens: 64, slo: {e2e: 2s, target_ratio: 0.9}, %s}
canary: {interval: 200ms}
bursts:
  - {name: catalogue, target: faulty, scenarios: [{scenario: s}], arrival: {process: constant, rate: 20}, requests: 6, schedule: {on_start: true}, slo_rule: point}
`, url, f.API, f.Scenario)
}
