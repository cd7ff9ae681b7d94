package quality

import (
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config"
)

func TestCheck(t *testing.T) {
	person := map[string]any{
		"type":     "object",
		"required": []any{"name", "age"},
		"properties": map[string]any{
			"name": map[string]any{"type": "string"},
			"age":  map[string]any{"type": "integer", "minimum": 0},
		},
	}
	for _, tc := range []struct {
		q      config.Quality
		answer string
		want   string // "" passes; else a part of the reason
	}{
		{config.Quality{Contains: "Paris"}, "The capital is Paris.", ""},
		{config.Quality{Contains: "Paris"}, "The capital is Lyon.", `answer does not contain "Paris"`},
		{config.Quality{Regex: `^\d+$`}, "42", ""},
		{config.Quality{Regex: `^\d+$`}, "42!", `answer does not match "^\\d+$"`},
		{config.Quality{Exact: "4"}, " 4\n", ""},
		{config.Quality{Exact: "4"}, "4.0", `answer is not exactly "4"`},
		{config.Quality{JSON: true}, ` {"ok": true} `, ""},
		{config.Quality{JSON: true}, `{"ok": tru`, "answer is not valid JSON"},
		{config.Quality{JSONSchema: person}, `{"name": "Ada", "age": 36}`, ""},
		{config.Quality{JSONSchema: person}, `{"name": "Ada", "age": -1}`, "answer does not match the schema at /age: minimum"},
		{config.Quality{JSONSchema: person}, `{"name": "Ada", "age": "36"}`, "answer does not match the schema at /age: got string, want integer"},
		{config.Quality{JSONSchema: person}, `{"name": "Ada"}`, "answer does not match the schema at /: missing property 'age'"},
		{config.Quality{JSONSchema: person}, "Here you go: {\"name\": \"Ada\"}", "answer is not JSON: "},
		{config.Quality{Contains: "Ada", JSONSchema: person}, `{"name": "Bob", "age": 1}`, `does not contain "Ada"`},
	} {
		var errs config.FieldErrors
		tc.q.Validate("quality", &errs)
		if len(errs) > 0 {
			t.Fatalf("%+v: %v", tc.q, errs[0])
		}
		got := Check(&tc.q, tc.answer)
		switch {
		case tc.want == "" && got != "":
			t.Errorf("%q: %q, want a pass", tc.answer, got)
		case tc.want != "" && !strings.Contains(got, tc.want):
			t.Errorf("%q: %q, want %q", tc.answer, got, tc.want)
		}
	}
}

func TestQuoteIsBounded(t *testing.T) {
	if q := Quote(strings.Repeat("é", 100)); len(q) > 64+len(`""…`)+2 {
		t.Errorf("Quote: %d bytes", len(q))
	}
}
