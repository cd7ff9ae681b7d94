package quality

import (
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config/field"
	"github.com/llmprobe/llmprobe/config/workload"
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
		q      workload.Quality
		answer string
		want   string // "" passes; else a part of the reason
	}{
		{workload.Quality{Contains: "Paris"}, "The capital is Paris.", ""},
		{workload.Quality{Contains: "Paris"}, "The capital is Lyon.", `answer does not contain "Paris"`},
		{workload.Quality{Regex: `^\d+$`}, "42", ""},
		{workload.Quality{Regex: `^\d+$`}, "42!", `answer does not match "^\\d+$"`},
		{workload.Quality{Exact: "4"}, " 4\n", ""},
		{workload.Quality{Exact: "4"}, "4.0", `answer is not exactly "4"`},
		{workload.Quality{JSON: true}, ` {"ok": true} `, ""},
		{workload.Quality{JSON: true}, `{"ok": tru`, "answer is not valid JSON"},
		{workload.Quality{JSONSchema: person}, `{"name": "Ada", "age": 36}`, ""},
		{workload.Quality{JSONSchema: person}, `{"name": "Ada", "age": -1}`, "answer does not match the schema at /age: minimum"},
		{workload.Quality{JSONSchema: person}, `{"name": "Ada", "age": "36"}`, "answer does not match the schema at /age: got string, want integer"},
		{workload.Quality{JSONSchema: person}, `{"name": "Ada"}`, "answer does not match the schema at /: missing property 'age'"},
		{workload.Quality{JSONSchema: person}, "Here you go: {\"name\": \"Ada\"}", "answer is not JSON: "},
		{workload.Quality{Contains: "Ada", JSONSchema: person}, `{"name": "Bob", "age": 1}`, `does not contain "Ada"`},
	} {
		var errs field.Errors
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
