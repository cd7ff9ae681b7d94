package prober

import (
	"testing"
	"time"
)

func TestPerTokenITLSampleCount(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	// 3 chunks, 6 tokens: 5 later tokens over 2 gaps alternate 2 and 3.
	got := perTokenITL(ms(10, 30, 60), nil, false, 6)
	if len(got) != 5 {
		t.Fatalf("samples = %v, want 5", got)
	}
	var sum time.Duration
	for _, d := range got {
		sum += d
	}
	if sum != 50*time.Millisecond {
		t.Errorf("samples sum to %s, want the 50ms between first and last chunk", sum)
	}
	if got := perTokenITL(ms(10), nil, false, 1); got != nil {
		t.Errorf("one chunk gave %v", got)
	}
	// More chunks than tokens reported: one sample per gap at least.
	if got := perTokenITL(ms(0, 10, 20, 30), nil, false, 2); len(got) != 3 {
		t.Errorf("samples = %v, want 3", got)
	}
}
