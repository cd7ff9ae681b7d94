package prober

import (
	"maps"

	"github.com/llmprobe/llmprobe/config"
)

// structuredFields sets a scenario's tools, tool_choice and response format
// on body: chat's shape as the scenario writes them, or flat, the Responses
// API's: flat function tools, {type: function, name} choice, and the
// format as text.format beside whatever else extra_body's text holds.
func structuredFields(body map[string]any, s *config.Structured, flat bool) {
	responses := flat
	if len(s.Tools) > 0 {
		tools := make([]map[string]any, len(s.Tools))
		for i, t := range s.Tools {
			tools[i] = functionTool(t.Function, responses)
		}
		body["tools"] = tools
	}
	if s.ToolChoice != nil {
		body["tool_choice"] = s.ToolChoice
		if mode, name := s.Choice(); responses && mode == config.ChoiceFunction {
			body["tool_choice"] = map[string]any{"type": "function", "name": name}
		}
	}
	f := s.ResponseFormat
	switch {
	case f == nil:
	case responses:
		text := map[string]any{}
		if extra, ok := body["text"].(map[string]any); ok {
			maps.Copy(text, extra)
		}
		format := map[string]any{"type": f.Type}
		if j := f.JSONSchema; j != nil {
			jsonFormat(format, j)
		}
		text["format"] = format
		body["text"] = text
	default:
		format := map[string]any{"type": f.Type}
		if j := f.JSONSchema; j != nil {
			format["json_schema"] = jsonFormat(map[string]any{}, j)
		}
		body["response_format"] = format
	}
}

// functionTool is a function as a tool: {type: function, function: {…}} for
// chat, flat for the Responses API.
func functionTool(f config.Function, flat bool) map[string]any {
	fn := map[string]any{"name": f.Name}
	if f.Description != "" {
		fn["description"] = f.Description
	}
	if f.Parameters != nil {
		fn["parameters"] = f.Parameters
	}
	if f.Strict != nil {
		fn["strict"] = *f.Strict
	}
	if flat {
		fn["type"] = "function"
		return fn
	}
	return map[string]any{"type": "function", "function": fn}
}

// jsonFormat adds a json_schema format's fields to m and returns it.
func jsonFormat(m map[string]any, j *config.JSONFormat) map[string]any {
	m["name"], m["schema"] = j.Name, j.Schema
	if j.Description != "" {
		m["description"] = j.Description
	}
	if j.Strict != nil {
		m["strict"] = *j.Strict
	}
	return m
}
