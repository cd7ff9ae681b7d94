package enginemetrics

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// SampleInterval is how often a burst reads the engine's gauges.
const SampleInterval = time.Second

// MaxSamples bounds a Sampler's memory: past it, every other read is
// dropped and the interval doubles, so a long run keeps an even spread.
const MaxSamples = 1024

// Sampler reads the engine's page every interval while a run goes on,
// keeping only the gauges (waiting, running, KV cache): read before and
// after alone, a burst that queued looks idle.
type Sampler struct {
	scraper Scraper
	every   time.Duration
	cancel  context.CancelFunc
	done    chan struct{}

	mu    sync.Mutex
	pages []*Page
}

// StartSampler starts reading every interval until Stop.
func StartSampler(ctx context.Context, s Scraper, every time.Duration) *Sampler {
	ctx, cancel := context.WithCancel(ctx)
	sm := &Sampler{scraper: s, every: every, cancel: cancel, done: make(chan struct{})}
	go sm.loop(ctx)
	return sm
}

func (sm *Sampler) loop(ctx context.Context) {
	defer close(sm.done)
	every := sm.every
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		p := sm.scraper.Scrape(ctx)
		if ctx.Err() != nil {
			return // cut by Stop: not a read of the run
		}
		for name := range p.families {
			if !gaugeSeries[name] {
				delete(p.families, name)
			}
		}
		sm.mu.Lock()
		sm.pages = append(sm.pages, p)
		if len(sm.pages) >= MaxSamples {
			kept := sm.pages[:0]
			for i := 0; i < len(sm.pages); i += 2 {
				kept = append(kept, sm.pages[i])
			}
			sm.pages = kept
			every *= 2
		}
		sm.mu.Unlock()
		t.Reset(every)
	}
}

// Stop ends the reads and returns the pages read; a nil Sampler has none.
func (sm *Sampler) Stop() []*Page {
	if sm == nil {
		return nil
	}
	sm.cancel()
	<-sm.done
	sm.mu.Lock()
	defer sm.mu.Unlock()
	return sm.pages
}

// Gauge returns the named gauge.
func (w *Window) Gauge(metric string) (Gauge, bool) {
	if w == nil {
		return Gauge{}, false
	}
	for _, g := range w.Gauges {
		if g.Metric == metric {
			return g, true
		}
	}
	return Gauge{}, false
}

// queuedShare is the share of TTFT, spent waiting in the server, above
// which requests seen waiting explain it.
const queuedShare = 0.5

// Queued says "queued for a slot" when the engine had requests waiting
// while the run went on and waiting in the server (queue, or time the
// engine did not split) was most of TTFT; serverShare < 0 when there is
// no TTFT split to weigh. Empty otherwise.
func (w *Window) Queued(serverShare float64) string {
	g, ok := w.Gauge(GaugeWaiting)
	if !ok || g.Samples == 0 || *g.Max <= 0 || (serverShare >= 0 && serverShare < queuedShare) {
		return ""
	}
	text := fmt.Sprintf("queued for a slot: the engine had requests waiting while the run went on (%s max %g, mean %.1f over %d reads)", g.Source, *g.Max, *g.Mean, g.Samples)
	if serverShare >= 0 {
		text += fmt.Sprintf(", and %.0f%% of TTFT was spent in the server before prefill (its queue, or time it did not split)", 100*serverShare)
	}
	return text
}
