package clock

import (
	"context"
	"testing"
	"time"
)

// Until must never return before its instant; how late it is, is the
// benchmark's business (bench/scale's pacer row).
func TestUntilNeverEarly(t *testing.T) {
	for name, p := range map[string]*Pacer{"timerfd": NewPacer(), "runtime timer": {}} {
		for _, d := range []time.Duration{-time.Millisecond, 0, time.Microsecond, 50 * time.Microsecond, 700 * time.Microsecond, 3 * time.Millisecond} {
			at := time.Now().Add(d)
			if !p.Until(context.Background(), at) {
				t.Fatalf("%s: Until(%s) reported a stop without one", name, d)
			}
			if now := time.Now(); now.Before(at) {
				t.Errorf("%s: Until(%s) returned %s early", name, d, at.Sub(now))
			}
		}
		p.Close()
	}
}

// A pacer on Linux waits on a timerfd.
func TestPacerHasTimerFD(t *testing.T) {
	p := NewPacer()
	defer p.Close()
	if p.f == nil {
		t.Fatal("no timerfd: the pacer waits on runtime timers alone")
	}
}

// A cancel ends a wait, and the next wait on the same pacer still waits
// its whole time although the cancel moved its deadline.
func TestUntilStops(t *testing.T) {
	for name, p := range map[string]*Pacer{"timerfd": NewPacer(), "runtime timer": {}} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if p.Until(ctx, time.Now().Add(time.Hour)) {
			t.Fatalf("%s: Until waited through a cancelled context", name)
		}
		ctx, cancel = context.WithCancel(context.Background())
		go cancel()
		if p.Until(ctx, time.Now().Add(time.Hour)) {
			t.Fatalf("%s: Until waited through a cancel", name)
		}
		at := time.Now().Add(5 * time.Millisecond)
		if !p.Until(context.Background(), at) || time.Now().Before(at) {
			t.Errorf("%s: the wait after a cancel returned early", name)
		}
		p.Close()
	}
}
