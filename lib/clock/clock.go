// Package clock waits until scheduled instants to within microseconds,
// where the runtime's timers can be a millisecond late.
package clock

import (
	"context"
	"time"
)

// The runtime's timers wake up to a millisecond late when the process is
// idle (its poller sleeps in whole milliseconds), and yielding through that
// last millisecond costs a core at high rates. So Until sleeps on a timer
// until coarseWindow before t, then in the kernel until spinWindow before
// t (it wakes within the thread's timer slack: 50 µs, or 1 ns after
// PreciseThread; the sleep holds its thread, not a P), then runs out the
// rest. Measured on 2 cores (docs/scale.md): dispatch delay p50 from 0.05
// ms (kernel sleep to the end) to under 1 µs, at up to spinWindow of CPU
// per wait.
const (
	coarseWindow = 2 * time.Millisecond
	spinWindow   = 200 * time.Microsecond
)

// Until waits until t, or until ctx ends: then it reports false. timer is
// the caller's, reused across calls; it is left stopped.
func Until(ctx context.Context, t time.Time, timer *time.Timer) bool {
	for {
		if ctx.Err() != nil {
			return false
		}
		d := time.Until(t)
		switch {
		case d <= 0:
			return true
		case d > coarseWindow:
			timer.Reset(d - coarseWindow)
			select {
			case <-ctx.Done():
				timer.Stop()
				return false
			case <-timer.C:
			}
		case d > spinWindow:
			fineSleep(d - spinWindow)
		default:
			// Back from the kernel, the goroutine may have waited for a P;
			// the last stretch is spent running, so it is not late again.
			for time.Now().Before(t) {
			}
		}
	}
}

// NewTimer is a stopped timer for Until.
func NewTimer() *time.Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}
