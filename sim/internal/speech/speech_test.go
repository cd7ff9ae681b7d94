package speech

import (
	"testing"
	"time"
)

func TestClipCounts(t *testing.T) {
	for _, tc := range []struct {
		length                  time.Duration
		encoder, seconds, words int
	}{
		{2 * time.Second, 100, 2, 5},
		{300 * time.Millisecond, 15, 1, 1},
		{400 * time.Millisecond, 20, 1, 1},
		{2001 * time.Millisecond, 101, 3, 6},
	} {
		c := Clip{Length: tc.length}
		if c.EncoderTokens() != tc.encoder || c.Seconds() != tc.seconds || c.Words(2.5) != tc.words {
			t.Errorf("%s: encoder %d, seconds %d, words %d; want %d, %d, %d", tc.length, c.EncoderTokens(), c.Seconds(), c.Words(2.5), tc.encoder, tc.seconds, tc.words)
		}
	}
}
