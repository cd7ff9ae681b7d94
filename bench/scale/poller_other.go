//go:build !linux

package main

import (
	"errors"
	"time"
)

func pollerBurst(string, float64, time.Duration, int) (float64, int, int, error) {
	return 0, 0, 0, errors.New("the one-poller spike needs Linux")
}
