package clock

import (
	"testing"
	"time"
)

// A reader that took no expiry for 20 ms takes every one it missed, and
// the earliest of them as 18 ms late: its lateness is never short.
func TestBeatTakesMissedExpiries(t *testing.T) {
	const period = 2 * time.Millisecond
	b, err := NewBeat(period)
	if err != nil {
		t.Fatalf("no beat on Linux: %v", err)
	}
	defer b.Close()
	start := time.Now()
	time.Sleep(20 * time.Millisecond)
	at, expiries, late, err := b.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if expiries < 9 {
		t.Errorf("%d expiries after %s, want at least 9", expiries, at.Sub(start))
	}
	if late < 17*time.Millisecond {
		t.Errorf("the earliest expiry taken %s late after a 20 ms stall, want at least 17 ms", late)
	}
	// The next one waits for its own expiry: it is late by its wake-up alone.
	_, expiries, late, err = b.Wait()
	if err != nil || expiries == 0 || late < 0 || late > period*time.Duration(expiries)+time.Millisecond {
		t.Errorf("the next wait: %d expiries, %s late, %v", expiries, late, err)
	}
}

// Close ends a wait in progress.
func TestBeatCloseEndsWait(t *testing.T) {
	b, err := NewBeat(time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		_, _, _, err := b.Wait()
		done <- err
	}()
	_ = b.Close()
	if err := <-done; err == nil {
		t.Fatal("a wait returned no error after Close")
	}
}
