package quality

import (
	"slices"
	"testing"
)

func TestWords(t *testing.T) {
	got := Words(`"Don't" STOP—the 'fox', it's 10 o'clock…`)
	want := []string{"don't", "stop", "the", "fox", "it's", "10", "o'clock"}
	if !slices.Equal(got, want) {
		t.Fatalf("Words = %q, want %q", got, want)
	}
}

func TestWordErrors(t *testing.T) {
	for _, c := range []struct {
		ref, hyp      string
		errors, words int
	}{
		{"the cat sat on the mat", "The cat sat on the mat.", 0, 6},
		{"the cat sat on the mat", "the cat sat on a mat", 1, 6},        // substitution
		{"the cat sat on the mat", "the cat sat on mat", 1, 6},          // deletion
		{"the cat sat on the mat", "the cat sat down on the mat", 1, 6}, // insertion
		{"the cat sat", "", 3, 3},
		{"one two", "three four five six", 4, 2}, // more errors than words: WER above 1
		{"", "hello", 1, 0},
	} {
		e, w := WordErrors(c.ref, c.hyp)
		if e != c.errors || w != c.words {
			t.Errorf("WordErrors(%q, %q) = %d, %d; want %d, %d", c.ref, c.hyp, e, w, c.errors, c.words)
		}
	}
}
