package clock

import (
	"context"
	"testing"
	"time"
)

// Until must never return before its instant, over the timer's range and
// the kernel sleep's; how late it is, is the benchmark's business.
func TestUntilNeverEarly(t *testing.T) {
	timer := NewTimer()
	for _, d := range []time.Duration{-time.Millisecond, 0, 50 * time.Microsecond, 700 * time.Microsecond, coarseWindow, 3 * time.Millisecond} {
		at := time.Now().Add(d)
		if !Until(context.Background(), at, timer) {
			t.Fatalf("Until(%s) reported a stop without one", d)
		}
		if now := time.Now(); now.Before(at) {
			t.Errorf("Until(%s) returned %s early", d, at.Sub(now))
		}
	}
}

func TestUntilStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if Until(ctx, time.Now().Add(time.Hour), NewTimer()) {
		t.Fatal("Until waited through a cancelled context")
	}
	ctx, cancel = context.WithCancel(context.Background())
	go cancel()
	if Until(ctx, time.Now().Add(time.Hour), NewTimer()) {
		t.Fatal("Until waited through a cancel")
	}
}
