package replay

import (
	"iter"
	"time"
)

// Cut bounds a replay as a burst bounds its arrivals: warmup first, while
// fewer than WarmupRequests were sent or the next arrival comes before
// WarmupDuration; then the measured part likewise from where warmup ended.
// MaxWarmup and MaxMeasured stop each part whatever the trace holds.
type Cut struct {
	Speedup                   float64 // divides the trace's offsets; 0 means 1
	WarmupRequests, MaxWarmup int
	WarmupDuration            time.Duration
	Requests, MaxMeasured     int
	Duration                  time.Duration
}

// Arrival is one replayed record: its offset after speedup and its part.
type Arrival struct {
	Record
	Warmup bool
}

// Arrivals yields the cut records of next, one at a time: next returns
// false at the end. At most one record is held.
func (c Cut) Arrivals(next func() (Record, bool)) iter.Seq[Arrival] {
	return func(yield func(Arrival) bool) {
		speedup := c.Speedup
		if speedup <= 0 {
			speedup = 1
		}
		rec, ok := next()
		at := func() time.Duration { return time.Duration(float64(rec.At) / speedup) }
		emit := func(warmup bool) bool {
			a := Arrival{Record: rec, Warmup: warmup}
			a.At = at()
			rec, ok = next()
			return yield(a)
		}
		for n := 0; ok && n < c.MaxWarmup && (n < c.WarmupRequests || at() < c.WarmupDuration); n++ {
			if !emit(true) {
				return
			}
		}
		start := at()
		for n := 0; ok && n < c.MaxMeasured && (n < c.Requests || at() < start+c.Duration); n++ {
			if !emit(false) {
				return
			}
		}
	}
}
