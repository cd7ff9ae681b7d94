package clock

import (
	"syscall"
	"time"
)

const (
	prSetTimerSlack = 29
	prGetTimerSlack = 30
)

// PreciseThread sets the locked thread's timer slack (50 µs by default) to
// 1 ns and returns what puts it back.
func PreciseThread() func() {
	old, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetTimerSlack, 0, 0)
	if errno != 0 {
		return func() {}
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1, 0); errno != 0 {
		return func() {}
	}
	return func() { _, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, old, 0) }
}

// fineSleep sleeps d in the kernel; a signal may end it early, and the
// caller waits again.
func fineSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil)
}
