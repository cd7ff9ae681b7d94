package clock

import (
	"runtime"
	"syscall"
	"testing"
)

func timerSlack(t *testing.T) uintptr {
	v, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetTimerSlack, 0, 0)
	if errno != 0 {
		t.Fatalf("PR_GET_TIMERSLACK: %v", errno)
	}
	return v
}

func TestPreciseThreadSetsAndRestoresSlack(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := timerSlack(t)
	restore := PreciseThread()
	if got := timerSlack(t); got != 1 {
		t.Errorf("timer slack %d ns, want 1", got)
	}
	restore()
	if got := timerSlack(t); got != before {
		t.Errorf("timer slack %d ns after restore, want %d", got, before)
	}
}
