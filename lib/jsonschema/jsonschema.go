// Package jsonschema compiles the JSON Schemas a configuration holds (draft
// 2020-12 unless a schema says otherwise) and checks a JSON text against
// one, naming the path that failed.
package jsonschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	js "github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Schema is a compiled schema.
type Schema struct{ compiled *js.Schema }

// ErrNotJSON is the error of a text that is no JSON at all.
var ErrNotJSON = errors.New("not JSON")

// maxReason bounds a failure's text, which lands in logs and reports.
const maxReason = 240

// resource is the URL doc is compiled under; no other is ever loaded.
const resource = "llmprobe:///schema.json"

// Compile compiles doc, a schema as YAML or JSON decodes it: an object or a
// boolean. A $ref reaches only inside doc: no file or URL is loaded.
func Compile(doc any) (*Schema, error) {
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("is no JSON value: %v", err)
	}
	v, err := js.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("is no JSON value: %v", err)
	}
	switch v.(type) {
	case map[string]any, bool:
	default:
		return nil, fmt.Errorf("must be an object or a boolean, not %s", typeName(v))
	}
	c := js.NewCompiler()
	c.DefaultDraft(js.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(resource, v); err != nil {
		return nil, errors.New(oneLine(err.Error()))
	}
	s, err := c.Compile(resource)
	var invalid *js.SchemaValidationError
	var verr *js.ValidationError
	switch {
	case errors.As(err, &invalid) && errors.As(invalid.Err, &verr):
		return nil, fmt.Errorf("is no valid JSON Schema: %s", reason(verr))
	case err != nil:
		return nil, errors.New(truncate(strings.ReplaceAll(oneLine(err.Error()), resource, "schema")))
	}
	return &Schema{compiled: s}, nil
}

// Validate checks text, which must be one JSON value, against s. The error
// is ErrNotJSON (wrapped) for a text that is no JSON, else it names the
// first failing path: "at /items/0/price: got string, want number".
func (s *Schema) Validate(text string) error {
	v, err := js.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return fmt.Errorf("%w: %s", ErrNotJSON, truncate(err.Error()))
	}
	return s.ValidateValue(v)
}

// ValidateValue checks v, decoded as js.UnmarshalJSON decodes (numbers as
// json.Number), against s.
func (s *Schema) ValidateValue(v any) error {
	err := s.compiled.Validate(v)
	var verr *js.ValidationError
	if !errors.As(err, &verr) {
		return err
	}
	return errors.New(reason(verr))
}

// reason is a validation error in one bounded line: its first failing
// path and why.
func reason(verr *js.ValidationError) string {
	leaf := firstLeaf(verr)
	p := message.NewPrinter(language.English)
	return truncate("at " + Pointer(leaf.InstanceLocation) + ": " + oneLine(leaf.ErrorKind.LocalizedString(p)))
}

// firstLeaf is the deepest first cause: the check that failed, not the
// schema nodes above it.
func firstLeaf(e *js.ValidationError) *js.ValidationError {
	for len(e.Causes) > 0 {
		causes := e.Causes
		// The deepest instance path first, so the reason points at the value.
		sort.SliceStable(causes, func(i, j int) bool { return len(causes[i].InstanceLocation) > len(causes[j].InstanceLocation) })
		e = causes[0]
	}
	return e
}

// Pointer is a JSON Pointer to an instance location; "/" for the root.
func Pointer(loc []string) string {
	if len(loc) == 0 {
		return "/"
	}
	var b strings.Builder
	for _, t := range loc {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "a number"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func truncate(s string) string {
	if len(s) <= maxReason {
		return s
	}
	n := maxReason
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// noLoader refuses every URL: a schema from a configuration must not make
// llmprobe read files or the network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("$ref %q: only references inside the schema are allowed", url)
}
