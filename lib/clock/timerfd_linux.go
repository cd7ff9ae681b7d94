package clock

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// newTimerFD is a monotonic timerfd in the runtime's network poller (it is
// non-blocking, so os.NewFile registers it there), and its descriptor.
func newTimerFD() (*os.File, int, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, 0, os.NewSyscallError("timerfd_create", err)
	}
	return os.NewFile(uintptr(fd), "timerfd"), fd, nil
}

// arm sets timerfd fd to expire once, d from now; setting it also forgets
// an expiry no read took.
func arm(fd int, d time.Duration) error {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	return unix.TimerfdSettime(fd, 0, &spec, nil)
}

// armEvery sets timerfd fd to expire every d, from d from now.
func armEvery(fd int, d time.Duration) error {
	t := unix.NsecToTimespec(int64(d))
	return unix.TimerfdSettime(fd, 0, &unix.ItimerSpec{Interval: t, Value: t}, nil)
}
