package target

import (
	"context"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/llmprobe/llmprobe/enginemetrics"
	"github.com/llmprobe/llmprobe/prober"
)

// EngineState is the last read of a target's engine metrics page.
type EngineState struct {
	// Last is the last scrape: when, how long, and why it failed if it did.
	Last *enginemetrics.Page
	// Window holds the engine's figures between the last two scrapes; nil
	// before the second.
	Window *enginemetrics.Window
}

// engineWatch holds one target's EngineState.
type engineWatch struct {
	mu    sync.Mutex
	state EngineState
}

func (w *engineWatch) get() EngineState {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.state
}

// engineLoop reads the engine's page every interval beside the canaries
// until ctx ends (a reload that changed or removed the target). A failing
// page is the target's own state: it stops nothing else.
func engineLoop(ctx context.Context, logger log.Logger, c *prober.Client, w *engineWatch) {
	t := c.Target()
	em := t.EngineMetrics
	s := enginemetrics.Scraper{Client: c.HTTPClient(), URL: enginemetrics.URL(t), Timeout: em.Timeout.Std(), Redact: c.Redact}
	tick := time.NewTicker(em.Interval.Std())
	defer tick.Stop()
	var prev *enginemetrics.Page
	lastErr := "-"
	for {
		p := s.Scrape(ctx)
		if ctx.Err() != nil {
			return
		}
		var win *enginemetrics.Window
		if prev != nil {
			win = enginemetrics.Compare(prev, p, enginemetrics.Options{Family: em.Family, Engine: c.Info().Engine, Model: c.Model()})
			win.URL = s.URL
		}
		w.mu.Lock()
		w.state = EngineState{Last: p, Window: win}
		w.mu.Unlock()
		prev = p
		// A change is worth a line; the same failure every interval is not.
		switch {
		case p.Error != "" && p.Error != lastErr:
			level.Warn(logger).Log("msg", "engine metrics unavailable", "target", t.Name, "url", s.URL, "err", p.Error)
		case p.Error == "" && lastErr != "" && lastErr != "-":
			level.Info(logger).Log("msg", "engine metrics available again", "target", t.Name, "url", s.URL)
		}
		lastErr = p.Error
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Engine returns the named target's engine metrics state; false when it
// names no engine_metrics.
func (t *Set) Engine(name string) (EngineState, bool) {
	t.mu.Lock()
	c := t.clients[name]
	t.mu.Unlock()
	if c == nil || c.engine == nil {
		return EngineState{}, false
	}
	return c.engine.get(), true
}
