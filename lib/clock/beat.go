package clock

import (
	"encoding/binary"
	"os"
	"time"
)

// Beat is a kernel timer that expires every period, read through the
// runtime's network poller as a socket is: how late its reader wakes after
// an expiry is how late a stream's reader wakes after a chunk arrives. One
// wake-up and one read per period, where a loopback write and read cost
// two goroutines' wake-ups and the TCP stack's work on both sides.
type Beat struct {
	f *os.File
	// start is taken just before the timer is armed: expiry k is at
	// start + k·period or a little after, so a lateness is never short.
	start  time.Time
	period time.Duration
	read   uint64 // expiries taken so far
}

// NewBeat starts a beat; Close stops it. Without a timerfd it fails.
func NewBeat(period time.Duration) (*Beat, error) {
	f, fd, err := newTimerFD()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := armEvery(fd, period); err != nil {
		_ = f.Close()
		return nil, err
	}
	return &Beat{f: f, start: start, period: period}, nil
}

// Wait blocks until the timer has expired since the last Wait. It gives
// when it woke, how many expiries it took, and how late the earliest of
// them was taken: each later one was taken a period less late. After
// Close, or on a failed read, it returns the error.
func (b *Beat) Wait() (at time.Time, expiries uint64, late time.Duration, err error) {
	var buf [8]byte
	if _, err := b.f.Read(buf[:]); err != nil {
		return time.Time{}, 0, 0, err
	}
	at = time.Now()
	expiries = binary.NativeEndian.Uint64(buf[:])
	earliest := b.start.Add(time.Duration(b.read+1) * b.period)
	b.read += expiries
	return at, expiries, max(at.Sub(earliest), 0), nil
}

// Close stops the beat; a Wait in progress returns an error.
func (b *Beat) Close() error { return b.f.Close() }
