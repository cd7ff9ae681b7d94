// The prober's own CPU throttling: a cgroup's CFS quota stops the whole
// process for up to a period at a time, and every request in flight
// carries the pause.

package burst

import (
	"time"

	"github.com/llmprobe/llmprobe/lib/cgroup"
	"github.com/llmprobe/llmprobe/stats"
)

// throttleSampler reads the throttled time of llmprobe's cgroup during a
// run. Only one goroutine samples at a time: the self-probe's reader, then
// stop.
type throttleSampler struct {
	stat        *cgroup.Stat // nil: no cgroup, the run's throttling is n/a
	first, last cgroup.Throttling
	lastAt      time.Time
	// paused is the run's throttling as wall-clock time: the kernel's
	// counter adds up each CPU's throttled run queue, so an increase
	// counts at most the time since the last reading.
	paused time.Duration
	failed bool // a reading failed: the total is n/a
}

// newThrottleSampler opens the cgroup found under root and takes the
// run's first reading.
func newThrottleSampler(root string) *throttleSampler {
	s := &throttleSampler{}
	stat, err := cgroup.Open(root)
	if err != nil {
		return s
	}
	if s.first, err = stat.Read(); err == nil {
		s.stat, s.last, s.lastAt = stat, s.first, time.Now()
	}
	return s
}

// sample notes on line, at now, the throttling since the last reading.
func (s *throttleSampler) sample(now time.Time, line *timeline) {
	if s.stat == nil || s.failed {
		return
	}
	t, err := s.stat.Read()
	if err != nil {
		s.failed = true
		return
	}
	if d := min(t.Time-s.last.Time, now.Sub(s.lastAt)); d > 0 {
		line.throttle(now, d)
		s.paused += d
	}
	s.last, s.lastAt = t, now
}

// close closes the cgroup's file after the last reading.
func (s *throttleSampler) close() {
	if s.stat != nil {
		_ = s.stat.Close()
	}
}

// total is the run's throttling, nil where it could not be read throughout.
func (s *throttleSampler) total() *stats.Throttling {
	if s.stat == nil || s.failed {
		return nil
	}
	return &stats.Throttling{Seconds: s.paused.Seconds(), Periods: s.last.Periods - s.first.Periods}
}

// throttle notes d of throttling that ended by t.
func (l *timeline) throttle(t time.Time, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := l.slot(t)
	if i >= len(l.throttled) {
		l.throttled = append(l.throttled, make([]time.Duration, i+1-len(l.throttled))...)
	}
	l.throttled[i] += d
}

// throttledIn is the throttling noted from from to to, and in a slot past
// it, as max takes delays: a pause is noted at the reading after it.
func (l *timeline) throttledIn(from, to time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var sum time.Duration
	for i := l.slot(from); i <= l.slot(to)+1 && i < len(l.throttled); i++ {
		sum += l.throttled[i]
	}
	return sum
}
