package config

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/llmprobe/llmprobe/lib/jsonschema"
)

// Structured is what a scenario asks the answer's shape to be: calls of the
// functions it offers (tools, tool_choice), or text in a response format.
// Each is sent as the API expects it and the answer is checked against it.
type Structured struct {
	// Tools are OpenAI function definitions.
	Tools []Tool `yaml:"tools,omitempty"`
	// ToolChoice is "auto", "none", "required", or
	// {type: function, function: {name: N}}; absent means auto.
	ToolChoice any `yaml:"tool_choice,omitempty"`
	// ResponseFormat asks for JSON text: a JSON object, or one matching a schema.
	ResponseFormat *ResponseFormat `yaml:"response_format,omitempty"`

	choice, chosen string // tool_choice's mode and named function, set by Validate
}

// Tool is one function the model may call.
type Tool struct {
	Type     string   `yaml:"type,omitempty"` // "function", filled in when left out
	Function Function `yaml:"function"`
}

// Function is a tool's function: its name, what it does, and the JSON
// Schema its arguments must match.
type Function struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description,omitempty"`
	Parameters  any    `yaml:"parameters,omitempty"`
	Strict      *bool  `yaml:"strict,omitempty"`

	schema *jsonschema.Schema
}

// Schema returns the compiled parameters, or nil for a function without.
func (f *Function) Schema() *jsonschema.Schema { return f.schema }

// Response formats.
const (
	FormatText       = "text"
	FormatJSONObject = "json_object"
	FormatJSONSchema = "json_schema"
)

// ResponseFormat is OpenAI's response_format.
type ResponseFormat struct {
	Type       string      `yaml:"type"`
	JSONSchema *JSONFormat `yaml:"json_schema,omitempty"`
}

// JSONFormat is a json_schema response format's schema and its name.
type JSONFormat struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description,omitempty"`
	Schema      any    `yaml:"schema"`
	Strict      *bool  `yaml:"strict,omitempty"`

	compiled *jsonschema.Schema
}

// Schema returns a json_schema format's compiled schema, or nil.
func (f *ResponseFormat) Schema() *jsonschema.Schema {
	if f == nil || f.JSONSchema == nil {
		return nil
	}
	return f.JSONSchema.compiled
}

// Tool choices, as Choice returns them.
const (
	ChoiceAuto     = "auto"
	ChoiceNone     = "none"
	ChoiceRequired = "required"
	ChoiceFunction = "function" // one named function
)

// MaxTools bounds tools, and so the function calls one answer keeps.
const MaxTools = 128

// functionNameRe is the alphabet OpenAI allows a function's name.
var functionNameRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Choice is tool_choice's mode (ChoiceAuto when tools are set without
// it) and, for ChoiceFunction, the function named; "" without tools.
func (s *Structured) Choice() (mode, name string) { return s.choice, s.chosen }

// Function returns the tool function called name, or nil.
func (s *Structured) Function(name string) *Function {
	for i := range s.Tools {
		if s.Tools[i].Function.Name == name {
			return &s.Tools[i].Function
		}
	}
	return nil
}

// FunctionNames lists the tools' function names, in order.
func (s *Structured) FunctionNames() []string {
	names := make([]string, len(s.Tools))
	for i, t := range s.Tools {
		names[i] = t.Function.Name
	}
	return names
}

// ChecksFormat reports whether the answer's text is checked against the
// response format: json_object and json_schema are.
func (s *Structured) ChecksFormat() bool {
	return s.ResponseFormat != nil && s.ResponseFormat.Type != FormatText
}

// validate adds to errs what is wrong with s, written at path, and compiles
// its schemas.
func (s *Structured) validate(path string, errs *FieldErrors) {
	s.choice, s.chosen = "", ""
	if len(s.Tools) > 0 {
		errs.IntWithin(path+".tools", len(s.Tools), 1, MaxTools, "tools")
		s.choice = ChoiceAuto
	}
	seen := map[string]string{}
	for i := range s.Tools {
		s.Tools[i].validate(fmt.Sprintf("%s.tools[%d]", path, i), seen, errs)
	}
	if s.ToolChoice != nil {
		s.validateChoice(path+".tool_choice", errs)
	}
	if f := s.ResponseFormat; f != nil {
		f.validate(path+".response_format", errs)
	}
}

func (t *Tool) validate(path string, seen map[string]string, errs *FieldErrors) {
	if t.Type == "" {
		t.Type = "function"
	}
	if t.Type != "function" {
		errs.Add(path+".type", "%q must be \"function\"", t.Type)
	}
	f := &t.Function
	path += ".function"
	switch first, dup := seen[f.Name]; {
	case f.Name == "":
		errs.Add(path+".name", "is required")
	case !functionNameRe.MatchString(f.Name):
		errs.Add(path+".name", "%q must be 1-64 letters, digits, '_' or '-'", f.Name)
	case dup:
		*errs = append(*errs, &FieldError{Path: path + ".name", Msg: fmt.Sprintf("duplicate function name %q", f.Name), First: first})
	default:
		seen[f.Name] = path + ".name"
	}
	f.schema = nil
	if f.Parameters != nil {
		s, err := jsonschema.Compile(f.Parameters)
		if err != nil {
			errs.Add(path+".parameters", "%v", err)
		}
		f.schema = s
	}
}

// validateChoice reads tool_choice: a mode, or one function of tools by name.
func (s *Structured) validateChoice(path string, errs *FieldErrors) {
	if len(s.Tools) == 0 {
		errs.Add(path, "needs tools: it says which of them the model may call")
		return
	}
	const shapes = `must be "auto", "none", "required" or {type: function, function: {name: …}}`
	switch c := s.ToolChoice.(type) {
	case string:
		if c != ChoiceAuto && c != ChoiceNone && c != ChoiceRequired {
			errs.Add(path, "%q %s", c, shapes)
			return
		}
		s.choice = c
	case map[string]any:
		fn, _ := c["function"].(map[string]any)
		name, _ := fn["name"].(string)
		if c["type"] != "function" || len(c) != 2 || len(fn) != 1 || name == "" {
			errs.Add(path, "%s", shapes)
			return
		}
		if s.Function(name) == nil {
			errs.Add(path+".function.name", "%q is no function of tools (%s)", name, strings.Join(s.FunctionNames(), ", "))
			return
		}
		s.choice, s.chosen = ChoiceFunction, name
	default:
		errs.Add(path, "%s", shapes)
	}
}

func (f *ResponseFormat) validate(path string, errs *FieldErrors) {
	formats := []string{FormatText, FormatJSONObject, FormatJSONSchema}
	if !slices.Contains(formats, f.Type) {
		errs.Add(path+".type", "%q must be %q, %q or %q", f.Type, FormatText, FormatJSONObject, FormatJSONSchema)
	}
	j := f.JSONSchema
	switch {
	case f.Type == FormatJSONSchema && j == nil:
		errs.Add(path+".json_schema", "is required with type json_schema: {name, schema}")
		return
	case j == nil:
		return
	case f.Type != FormatJSONSchema:
		errs.Add(path+".json_schema", "only goes with type json_schema")
	}
	path += ".json_schema"
	if !functionNameRe.MatchString(j.Name) {
		errs.Add(path+".name", "%q must be 1-64 letters, digits, '_' or '-'", j.Name)
	}
	j.compiled = nil
	if j.Schema == nil {
		errs.Add(path+".schema", "is required")
		return
	}
	s, err := jsonschema.Compile(j.Schema)
	if err != nil {
		errs.Add(path+".schema", "%v", err)
	}
	j.compiled = s
}

// Refuse adds to errs, for s at path run on target (its API and name),
// each field its API cannot send: only chat and responses have tools and
// response formats.
func (s *Structured) Refuse(path, target string, errs *FieldErrors) {
	for _, f := range []struct {
		name string
		set  bool
	}{{"tools", len(s.Tools) > 0}, {"tool_choice", s.ToolChoice != nil}, {"response_format", s.ResponseFormat != nil}} {
		if f.set {
			errs.Add(path+"."+f.name, "does not apply to %s: its API has neither tools nor response_format (api: chat and responses have both)", target)
		}
	}
}
