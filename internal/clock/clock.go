// Package clock waits until scheduled instants to within microseconds,
// where the runtime's timers can be a millisecond late.
package clock

import (
	"context"
	"time"
)

// The runtime's timers wake up to a millisecond late when the process is
// idle (its poller sleeps in whole milliseconds), and spinning through that
// last millisecond costs a core at high rates. So Until sleeps on a timer
// until coarseWindow before t, then sleeps the rest in the kernel, which
// wakes within the thread's timer slack (50 µs unless PreciseThread set it
// to 1 ns) and costs nothing while it sleeps. The kernel sleep holds its
// thread, not a P: the runtime runs other goroutines meanwhile.
const coarseWindow = 2 * time.Millisecond

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
		default:
			fineSleep(d)
		}
	}
}

// NewTimer is a stopped timer for Until.
func NewTimer() *time.Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}
