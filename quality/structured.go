package quality

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/llmprobe/llmprobe/config"
)

// Scenario checks an answer (its text and its function calls) against
// what s asks of it: the shape s.Structured asks for, then s.Quality's
// checks. checked is false when s asks nothing; why is "" when it passed.
func Scenario(s *config.Scenario, answer string, calls []ToolCall) (checked bool, why string) {
	if s.Quality == nil && len(s.Tools) == 0 && !s.ChecksFormat() {
		return false, ""
	}
	if why = Structured(&s.Structured, answer, calls); why == "" && s.Quality != nil {
		why = Check(s.Quality, answer)
	}
	return true, why
}

// Structured returns "" when an answer is what s asks for, else why not
// in one line. With tools: tool_choice required, or one function named,
// gets a call of it and none gets none; each call names a function of
// tools, and its arguments are JSON that matches the function's
// parameters. An answer without calls matches a json_object (a JSON
// object) or json_schema (its schema) response format.
func Structured(s *config.Structured, answer string, calls []ToolCall) string {
	if len(s.Tools) > 0 {
		if why := toolChoice(s, calls); why != "" {
			return why
		}
		for i, c := range calls {
			if why := toolCall(s, i, c); why != "" {
				return why
			}
		}
	}
	if len(calls) > 0 || !s.ChecksFormat() {
		return ""
	}
	text := strings.TrimSpace(answer)
	if s.ResponseFormat.Type == config.FormatJSONObject {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(text), &obj); err != nil || obj == nil {
			return "answer is not a JSON object, which response_format json_object asks for"
		}
		return ""
	}
	if notJSON, why := schemaProblem(s.ResponseFormat.Schema(), text); why != "" {
		if notJSON {
			return "answer is not JSON, which response_format json_schema asks for: " + why
		}
		return "answer does not match response_format's schema " + why
	}
	return ""
}

// toolChoice says how calls fall short of tool_choice, or "".
func toolChoice(s *config.Structured, calls []ToolCall) string {
	mode, chosen := s.Choice()
	switch {
	case mode == config.ChoiceNone && len(calls) > 0:
		return "tool call " + name(calls[0]) + " under tool_choice none"
	case mode == config.ChoiceRequired && len(calls) == 0:
		return "no tool call under tool_choice required"
	case mode == config.ChoiceFunction && len(calls) == 0:
		return "no tool call, while tool_choice names " + chosen
	}
	for _, c := range calls {
		if mode == config.ChoiceFunction && c.Name != chosen {
			return "tool call " + name(c) + ", while tool_choice names " + chosen
		}
	}
	return ""
}

// toolCall says what is wrong with call i, c, or "".
func toolCall(s *config.Structured, i int, c ToolCall) string {
	if c.Name == "" {
		return fmt.Sprintf("tool call #%d names no function", i+1)
	}
	f := s.Function(c.Name)
	switch {
	case f == nil:
		return "tool call " + name(c) + ": no such function in tools (" + strings.Join(s.FunctionNames(), ", ") + ")"
	case c.Cut:
		return fmt.Sprintf("tool call %s: arguments longer than the %d KiB kept, not checked", c.Name, MaxArgumentBytes>>10)
	}
	notJSON, why := schemaProblem(f.Schema(), c.Arguments)
	switch {
	case notJSON:
		return "tool call " + c.Name + ": arguments are not JSON: " + why
	case why != "":
		return "tool call " + c.Name + ": arguments do not match the schema " + why
	}
	return ""
}

// name is a call's function name as a reason writes it: as it is when it
// is of the alphabet of tools' names, quoted otherwise (it is the server's).
func name(c ToolCall) string {
	if functionName.MatchString(c.Name) {
		return c.Name
	}
	return Quote(c.Name)
}

var functionName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
