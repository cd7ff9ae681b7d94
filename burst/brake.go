package burst

import (
	"fmt"
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
)

// brake watches the measured results of a burst and stops it when, over the
// last window, the share of errors, rejects or SLO misses passes its maximum.
type brake struct {
	cfg    config.Brake
	stop   func(reason string)
	mu     sync.Mutex
	recent []brakeSample
	fired  bool
}

type brakeSample struct {
	at                     time.Time
	failed, rejected, miss bool
}

// minBrakeSamples keeps one unlucky request from stopping a burst.
const minBrakeSamples = 5

func newBrake(cfg config.Brake, stop func(string)) *brake { return &brake{cfg: cfg, stop: stop} }

func (b *brake) observe(r *prober.Result) {
	if b.cfg.Window <= 0 {
		return
	}
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fired {
		return
	}
	b.recent = append(b.recent, brakeSample{
		at:       now,
		failed:   r.Outcome != prober.OutcomeSuccess && r.Outcome != prober.OutcomeRejected,
		rejected: r.Outcome == prober.OutcomeRejected,
		miss:     !r.Good,
	})
	cut := 0
	for cut < len(b.recent) && now.Sub(b.recent[cut].at) > b.cfg.Window.Std() {
		cut++
	}
	b.recent = b.recent[cut:]
	if len(b.recent) < minBrakeSamples {
		return
	}
	var failed, rejected, miss int
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
	n := float64(len(b.recent))
	check := func(what string, count int, limit float64) {
		if b.fired || limit <= 0 || float64(count)/n <= limit {
			return
		}
		b.fired = true
		b.stop(fmt.Sprintf("safety brake: %s ratio %.2f over the last %s passed %.2f", what, float64(count)/n, b.cfg.Window, limit))
	}
	check("error", failed, b.cfg.MaxErrorRatio)
	check("reject", rejected, b.cfg.MaxRejectRatio)
	check("SLO-miss", miss, b.cfg.MaxSLOMissRatio)
}
