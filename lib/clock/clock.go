// Package clock keeps time with the kernel's timers: it waits until
// scheduled instants to within the kernel's wake-up time, where the
// runtime's timers can be a millisecond late, and beats at a period to
// measure how late the runtime wakes a reader.
package clock

import (
	"context"
	"errors"
	"os"
	"time"
)

// Pacer waits until one instant at a time, for one goroutine, at no CPU
// cost between instants.
//
// The runtime checks its timers whenever a goroutine is scheduled, so on a
// busy process they fire promptly; on an idle one its network poller
// sleeps in whole milliseconds, and a timer can be up to one late. So a
// Pacer waits on both at once: a read of a timerfd, whose expiry ends the
// poller's sleep at once, under a read deadline at the same instant, a
// runtime timer that readies the reader directly. No thread sleeps and
// nothing spins (an earlier clock spun through the last 200 µs: at 2,000
// arrivals a second, a fifth of a core).
type Pacer struct {
	f     *os.File    // the timerfd; nil where the kernel offers none
	fd    int         // f's descriptor, which f keeps open
	timer *time.Timer // the fallback without one
}

// past is a deadline that has passed: it ends a read at once.
var past = time.Unix(1, 0)

// NewPacer makes a pacer; Close releases it. Without a timerfd it waits on
// the runtime's timers alone.
func NewPacer() *Pacer {
	f, fd, err := newTimerFD()
	if err != nil {
		return &Pacer{}
	}
	return &Pacer{f: f, fd: fd}
}

// Close releases the pacer's timerfd.
func (p *Pacer) Close() {
	if p.f != nil {
		_ = p.f.Close()
	}
	if p.timer != nil {
		p.timer.Stop()
	}
}

// Until waits until t, or until ctx ends: then it reports false.
func (p *Pacer) Until(ctx context.Context, t time.Time) bool {
	if ctx.Err() != nil {
		return false
	}
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	if p.f == nil || arm(p.fd, d) != nil {
		return p.timerUntil(ctx, t)
	}
	_ = p.f.SetReadDeadline(t)
	stop := context.AfterFunc(ctx, func() { _ = p.f.SetReadDeadline(past) })
	defer stop()
	var expirations [8]byte
	for {
		_, err := p.f.Read(expirations[:])
		switch {
		case ctx.Err() != nil:
			return false
		case !time.Now().Before(t):
			return true
		case err != nil && !errors.Is(err, os.ErrDeadlineExceeded):
			return p.timerUntil(ctx, t)
		}
		// Early: a cancel of an earlier wait that moved the deadline.
		_ = p.f.SetReadDeadline(t)
	}
}

// timerUntil waits on a runtime timer alone.
func (p *Pacer) timerUntil(ctx context.Context, t time.Time) bool {
	if p.timer == nil {
		p.timer = time.NewTimer(time.Hour)
	}
	for {
		d := time.Until(t)
		if d <= 0 {
			return true
		}
		p.timer.Reset(d)
		select {
		case <-ctx.Done():
			p.timer.Stop()
			return false
		case <-p.timer.C:
		}
	}
}
