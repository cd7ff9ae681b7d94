package burst

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
)

// brake watches a burst and stops it when, over the last window, the share
// of errors, rejects or SLO misses passes its maximum. A request still in
// flight past its scenario's tightest objective already missed it, so it
// counts as a miss before it ends: a server that hangs stops the burst
// within the window, not after the requests' timeouts.
type brake struct {
	cfg  config.Brake
	min  int
	stop func(reason string)

	mu       sync.Mutex
	recent   []brakeSample
	inFlight map[int]time.Time // request -> when it misses its tightest objective
	fired    bool
}

type brakeSample struct {
	at                     time.Time
	failed, rejected, miss bool
}

// newBrake sizes the minimum sample to the arrivals expected in a window at
// rate (half of them, at least 5), unless min_samples sets it: a fixed small
// minimum stops a fast burst on two transient errors.
func newBrake(cfg config.Brake, rate float64, stop func(string)) *brake {
	minSamples := cfg.MinSamples
	if minSamples <= 0 {
		minSamples = max(5, int(math.Ceil(rate*cfg.Window.Std().Seconds()/2)))
	}
	return &brake{cfg: cfg, min: minSamples, stop: stop, inFlight: map[int]time.Time{}}
}

func (b *brake) enabled() bool { return b.cfg.Window > 0 }

// started notes request id in flight; missAt is when it misses its
// scenario's tightest objective (zero: it has none).
func (b *brake) started(id int, missAt time.Time) {
	if !b.enabled() || missAt.IsZero() {
		return
	}
	b.mu.Lock()
	b.inFlight[id] = missAt
	b.mu.Unlock()
}

// finished takes a request's result. Warmup counts too: the brake protects
// the target.
func (b *brake) finished(id int, r *prober.Result) {
	if !b.enabled() || r.Outcome == prober.OutcomeCancelled {
		return
	}
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.inFlight, id)
	b.recent = append(b.recent, brakeSample{
		at:       now,
		failed:   r.Outcome != prober.OutcomeSuccess && r.Outcome != prober.OutcomeRejected,
		rejected: r.Outcome == prober.OutcomeRejected,
		miss:     !r.Good,
	})
	b.checkLocked(now)
}

// tick checks the requests in flight; the runner calls it while the burst runs.
func (b *brake) tick() {
	if !b.enabled() {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.checkLocked(time.Now())
}

// tickEvery is how often the runner ticks: a tenth of the window, so a hang
// is seen well within it.
func (b *brake) tickEvery() time.Duration {
	return max(b.cfg.Window.Std()/10, 10*time.Millisecond)
}

func (b *brake) checkLocked(now time.Time) {
	if b.fired {
		return
	}
	cut := 0
	for cut < len(b.recent) && now.Sub(b.recent[cut].at) > b.cfg.Window.Std() {
		cut++
	}
	b.recent = b.recent[cut:]
	overdue := 0
	for _, missAt := range b.inFlight {
		if now.After(missAt) {
			overdue++
		}
	}
	n := len(b.recent) + overdue
	if n < b.min {
		return
	}
	failed, rejected, miss := 0, 0, overdue
	for _, s := range b.recent {
		if s.failed {
			failed++
		}
		if s.rejected {
			rejected++
		}
		if s.miss {
			miss++
		}
	}
	check := func(what string, count int, limit float64) {
		ratio := float64(count) / float64(n)
		if b.fired || limit <= 0 || ratio <= limit {
			return
		}
		b.fired = true
		detail := ""
		if overdue > 0 && what == "SLO-miss" {
			detail = fmt.Sprintf(", %d of them still in flight past their objective", overdue)
		}
		b.stop(fmt.Sprintf("safety brake: %s ratio %.2f over the last %s (%d of %d requests%s) passed %.2f", what, ratio, b.cfg.Window, count, n, detail, limit))
	}
	check("error", failed, b.cfg.MaxErrorRatio)
	check("reject", rejected, b.cfg.MaxRejectRatio)
	check("SLO-miss", miss, b.cfg.MaxSLOMissRatio)
}

// tightest is the soonest a request of s misses an objective: its TTFT or
// E2E threshold, whichever is smaller; 0 when it has neither.
func tightest(s config.Scenario) time.Duration {
	var t time.Duration
	for _, d := range []config.Duration{s.SLO.TTFT, s.SLO.E2E} {
		if d > 0 && (t == 0 || d.Std() < t) {
			t = d.Std()
		}
	}
	return t
}
