//go:build !linux

package clock

import (
	"errors"
	"os"
	"time"
)

func newTimerFD() (*os.File, int, error) { return nil, 0, errors.New("no timerfd on this system") }

func arm(int, time.Duration) error { return errors.New("no timerfd on this system") }

func armEvery(int, time.Duration) error { return errors.New("no timerfd on this system") }
