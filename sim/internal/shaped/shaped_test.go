package shaped

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// Pieces cover the text in order, each a whole UTF-8 sequence.
func TestPieces(t *testing.T) {
	for _, text := range []string{`{"city":"Paris","note":"été à Montréal, 22°C"}`, `[1, 22.5, true]`, ``} {
		p := Pieces(text)
		if strings.Join(p, "") != text {
			t.Errorf("%q: pieces %q", text, p)
		}
		for _, s := range p {
			if !utf8.ValidString(s) || len(s) > 8 && !strings.ContainsRune(s, 'é') {
				t.Errorf("%q: piece %q", text, s)
			}
		}
	}
	if p := Pieces(`{"city": "Paris"}`); len(p) < 6 {
		t.Errorf("too few pieces to stream: %q", p)
	}
}

// Tokens read a few at a time make the same calls as one at a time: the
// name where the call's first token is, the arguments' pieces joined.
func TestChatDeltaSpans(t *testing.T) {
	tools := json.RawMessage(`[{"type":"function","function":{"name":"a","parameters":{"type":"object","properties":{"x":{"type":"string"}}}}}]`)
	for _, llama := range []bool{false, true} {
		ans, err := Plan(Request{Tools: tools}, rand.New(rand.NewPCG(1, 2)), "", llama)
		if err != nil || ans == nil {
			t.Fatal(err)
		}
		var whole string
		for _, per := range []int{1, 3, ans.Tokens()} {
			var args strings.Builder
			var names []any
			for from := 0; from < ans.Tokens(); from += per {
				for _, c := range ans.ChatDelta(from, min(from+per, ans.Tokens()))["tool_calls"].([]map[string]any) {
					fn := c["function"].(map[string]any)
					if n, ok := fn["name"]; ok {
						names = append(names, n)
					}
					if a, ok := fn["arguments"].(string); ok {
						args.WriteString(a)
					}
				}
			}
			if per == 1 {
				whole = args.String()
			}
			if !reflect.DeepEqual(names, []any{"a"}) || args.String() != whole || !json.Valid([]byte(whole)) {
				t.Errorf("llama %v, %d per chunk: names %v, arguments %q (one at a time: %q)", llama, per, names, args.String(), whole)
			}
		}
	}
}
