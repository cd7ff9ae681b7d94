package quality

import (
	"strings"
	"unicode"
)

// Words are text's words as a word error rate counts them: lower case,
// split at whatever is no letter, digit or apostrophe, apostrophes kept
// only inside a word ("don't", not "'quoted'"). Numbers are not spelled
// out, as Whisper's English normalizer would: "ten" and "10" differ.
func Words(text string) []string {
	fields := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	})
	out := fields[:0]
	for _, f := range fields {
		if f = strings.Trim(f, "'"); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// WordErrors counts the substitutions, deletions and insertions that turn
// reference's words into hypothesis's (the edit distance over Words), and
// reference's words: their ratio is the word error rate, and a corpus's
// rate is its errors over its words, not the mean of its clips' rates.
func WordErrors(reference, hypothesis string) (errors, words int) {
	ref, hyp := Words(reference), Words(hypothesis)
	// One row of the edit-distance table at a time.
	prev, cur := make([]int, len(hyp)+1), make([]int, len(hyp)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ref); i++ {
		cur[0] = i
		for j := 1; j <= len(hyp); j++ {
			sub := prev[j-1]
			if ref[i-1] != hyp[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(hyp)], len(ref)
}
