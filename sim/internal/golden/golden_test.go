package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestTokensJoinToTheAnswer(t *testing.T) {
	for _, tc := range []struct {
		answer string
		want   []string
	}{
		{"Paris", []string{"Paris"}},
		{"The capital is Paris.", []string{"The", " capital", " is", " Paris."}},
		{" {\"ok\": true}\n", []string{" {\"ok\":", " true}\n"}},
		{"line one\nline  two", []string{"line", " one", "\nline", "  two"}},
	} {
		got := Tokens(tc.answer)
		if !slices.Equal(got, tc.want) || strings.Join(got, "") != tc.answer {
			t.Errorf("Tokens(%q) = %q, want %q", tc.answer, got, tc.want)
		}
	}
}

func writeSet(t *testing.T, lines ...string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "golden.jsonl")
	if err := os.WriteFile(f, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// A prompt is known after llmprobe's nonce line whatever the nonce, a
// messages line by its messages, and anything else is not.
func TestAnswerKnowsThePromptAfterTheNonce(t *testing.T) {
	f := writeSet(t,
		`{"id": "fr", "prompt": "Capital of France?", "checks": {"contains": "Paris"}, "answer": "Paris"}`,
		`{"messages": [{"role": "system", "content": "One word."}, {"role": "user", "content": "Sky colour?"}], "checks": {"exact": "blue"}, "answer": "blue"}`,
		`{"prompt": "No answer.", "checks": {"regex": "."}}`)
	s, err := Load(f, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		texts []string
		want  string
	}{
		{[]string{"ref: the of and to\nCapital of France?"}, "Paris"},
		{[]string{"ref: in is was for\nCapital of France?"}, "Paris"},
		{[]string{"Capital of France?"}, "Paris"},
		{[]string{"ref: a b c d\nOne word.", "Sky colour?"}, "blue"},
		{[]string{"ref: a b c d\nOne word.\n\nSky colour?"}, "blue"}, // completions: joined
		{[]string{"ref: a b c d\nCapital of Italy?"}, ""},
		{[]string{"ref: a b c d\nNo answer."}, ""},
	} {
		if got := strings.Join(s.Answer(tc.texts), ""); got != tc.want {
			t.Errorf("Answer(%q) = %q, want %q", tc.texts, got, tc.want)
		}
	}
}

// The wrong answers are a seeded share: the same request gets the same
// answer, another seed other ones, about the rate of them wrong.
func TestWrongRateIsSeeded(t *testing.T) {
	f := writeSet(t, `{"prompt": "Capital of France?", "checks": {"contains": "Paris"}, "answer": "Paris"}`)
	wrongOf := func(seed int64) []bool {
		s, err := Load(f, 0.3, seed)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]bool, 2000)
		for i := range out {
			out[i] = strings.Join(s.Answer([]string{fmt.Sprintf("ref:%d\nCapital of France?", i)}), "") == Wrong
		}
		return out
	}
	a, b := wrongOf(1), wrongOf(1)
	if !slices.Equal(a, b) {
		t.Error("one seed answered one request differently")
	}
	if slices.Equal(a, wrongOf(2)) {
		t.Error("two seeds answered alike")
	}
	n := 0
	for _, w := range a {
		if w {
			n++
		}
	}
	if n < 520 || n > 680 {
		t.Errorf("%d of 2000 answered wrong, want about 600", n)
	}
}

func TestLoadRefuses(t *testing.T) {
	if _, err := Load(writeSet(t, `{"prompt": "x", "checks": {"contains": "x"}}`), 0, 1); err == nil || !strings.Contains(err.Error(), "holds no golden line with an answer") {
		t.Errorf("a set without answers: %v", err)
	}
	if _, err := Load(writeSet(t, `{"prompt": "x",`), 0, 1); err == nil || !strings.Contains(err.Error(), "golden.jsonl:1:") {
		t.Errorf("a broken line: %v", err)
	}
	if _, err := Load(writeSet(t, `{"prompt": "x", "answer": "x"}`), 1.5, 1); err == nil || !strings.Contains(err.Error(), "must be within [0, 1]") {
		t.Errorf("a wrong rate of 1.5: %v", err)
	}
}
