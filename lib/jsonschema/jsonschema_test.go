package jsonschema

import (
	"errors"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

const orderSchema = `
type: object
required: [id, items]
additionalProperties: false
properties:
  id: {type: integer, minimum: 1}
  items:
    type: array
    minItems: 1
    items:
      type: object
      required: [sku, price]
      properties:
        sku: {type: string, pattern: "^[A-Z]{3}-[0-9]+$"}
        price: {type: number}
`

func compileYAML(t *testing.T, src string) *Schema {
	t.Helper()
	var doc any
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	s, err := Compile(doc)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return s
}

func TestValidateNamesTheFailingPath(t *testing.T) {
	s := compileYAML(t, orderSchema)
	for _, tc := range []struct{ text, want string }{
		{`{"id": 7, "items": [{"sku": "ABC-1", "price": 2.5}]}`, ""},
		{`{"id": 7, "items": [{"sku": "ABC-1", "price": "2.5"}]}`, "at /items/0/price: got string, want number"},
		{`{"id": 7, "items": [{"sku": "abc", "price": 1}]}`, "at /items/0/sku: "},
		{`{"id": 0, "items": [{"sku": "ABC-1", "price": 1}]}`, "at /id: minimum"},
		{`{"items": [{"sku": "ABC-1", "price": 1}]}`, "at /: missing property 'id'"},
		{`{"id": 1, "items": [], "note": 1}`, "at /"},
		{`[1, 2]`, "at /: got array, want object"},
	} {
		err := s.Validate(tc.text)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want valid", tc.text, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.text, err, tc.want)
		}
	}
}

func TestNotJSON(t *testing.T) {
	s := compileYAML(t, `{type: object}`)
	for _, text := range []string{`{"a": `, `{"a": 1} trailing`, ``, `Sure! {"a": 1}`} {
		if err := s.Validate(text); !errors.Is(err, ErrNotJSON) {
			t.Errorf("%q: %v, want ErrNotJSON", text, err)
		}
	}
}

func TestCompileRefusesWhatIsNoSchema(t *testing.T) {
	for _, tc := range []struct {
		doc  any
		want string
	}{
		{"string", "must be an object or a boolean"},
		{[]any{1}, "must be an object or a boolean"},
		{map[string]any{"type": "nosuchtype"}, "is no valid JSON Schema: at /type: value must be one of"},
		{map[string]any{"$ref": "file:///etc/passwd"}, "only references inside the schema"},
		{map[string]any{"$ref": "https://example.com/s.json"}, "only references inside the schema"},
		{map[string]any{"minimum": "x"}, "minimum"},
	} {
		_, err := Compile(tc.doc)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Compile(%v) = %v, want %q", tc.doc, err, tc.want)
		}
	}
	// A reference inside the schema is fine.
	s, err := Compile(map[string]any{"$defs": map[string]any{"n": map[string]any{"type": "number"}}, "$ref": "#/$defs/n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(`"x"`); err == nil {
		t.Error(`"x" passed a number schema`)
	}
}

func TestReasonIsBounded(t *testing.T) {
	s := compileYAML(t, `{type: object, properties: {a: {enum: [`+strings.Repeat(`"long-enum-value", `, 100)+`"z"]}}}`)
	err := s.Validate(`{"a": "y"}`)
	if err == nil || len(err.Error()) > maxReason+len("…") || strings.Contains(err.Error(), "\n") {
		t.Errorf("reason %q: want one line of at most %d bytes", err, maxReason)
	}
}
