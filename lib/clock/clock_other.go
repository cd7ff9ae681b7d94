//go:build !linux

package clock

import (
	"runtime"
	"time"
)

// PreciseThread does nothing where the kernel offers no timer slack to set.
func PreciseThread() func() { return func() {} }

// fineSleep yields until d passed: without a precise kernel sleep, a short
// spin is the way to be on time.
func fineSleep(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
		runtime.Gosched()
	}
}
