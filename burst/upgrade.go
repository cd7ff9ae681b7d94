package burst

import (
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
)

// engineWatch follows one upgrade-triggered burst's target facts and says
// when they changed and held for the settle time. It outlives reloads that
// keep the burst and its target, so the facts known before one stay known.
type engineWatch struct {
	target string

	mu     sync.Mutex
	settle time.Duration
	known  *report.Facts // nil until the first facts: those are no change
	// pending are the newest facts that differ from known or from the
	// pending ones before them; the settle timer runs for them.
	pending *report.Facts
	timer   *time.Timer
	// queued is the "from" of a settled change its loop has not taken
	// yet; a later change before it is taken keeps the first "from".
	queued *report.Facts
	signal chan struct{} // has a value while queued is set
}

func newEngineWatch(target string, settle time.Duration) *engineWatch {
	return &engineWatch{target: target, settle: settle, signal: make(chan struct{}, 1)}
}

// FactsOf are the facts a client's confirmed info says: the engine, its
// version and the model llmprobe measures.
func FactsOf(c *prober.Client, info prober.Info) report.Facts {
	model := c.Target().Model
	if model == "" && len(info.Models) > 0 {
		model = info.Models[0]
	}
	return report.Facts{Engine: info.Engine, Version: info.EngineVersion, Model: model}
}

// observe takes facts the target confirmed just now.
func (w *engineWatch) observe(f report.Facts) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.known == nil:
		w.known = &f // llmprobe (re)started: what runs now is no change
		return
	case f.Version == "" && w.known.Version != "":
		return // the version endpoint failed this time: not a downgrade to "no version"
	case w.pending == nil && f == *w.known:
		return
	case w.pending != nil && f == *w.pending:
		return // holding: the settle time runs on
	}
	// A new change, or a flap: the settle time starts again, and when it
	// ends the facts then are compared with those known before.
	w.pending = &f
	if w.timer != nil {
		w.timer.Stop()
	}
	w.timer = time.AfterFunc(w.settle, w.settled)
}

// settled runs when pending facts held for the settle time.
func (w *engineWatch) settled() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pending == nil {
		return
	}
	now, from := *w.pending, *w.known
	w.pending, w.timer = nil, nil
	if now == from {
		return // it came back to what it was: nothing changed
	}
	w.known = &now
	if w.queued == nil {
		w.queued = &from
	}
	w.signal1()
}

// poke signals again a change taken off the channel but not run: a loop
// stopped by a reload hands it to the next one.
func (w *engineWatch) poke() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.queued != nil {
		w.signal1()
	}
}

// signal1 leaves one signal on the channel. Called with w.mu held.
func (w *engineWatch) signal1() {
	select {
	case w.signal <- struct{}{}:
	default:
	}
}

// take returns the settled change's "from" facts, once.
func (w *engineWatch) take() *report.Facts {
	w.mu.Lock()
	defer w.mu.Unlock()
	f := w.queued
	w.queued = nil
	return f
}

// stop ends a settle time in progress.
func (w *engineWatch) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
		w.timer, w.pending = nil, nil
	}
}

// applyWatches keeps the watch of every upgrade-triggered burst whose
// target is unchanged, so a reload keeps the facts known, and starts the
// others knowing what their client knows already. Called with s.mu held.
func (s *Scheduler) applyWatches(cfg *config.Config, clients map[string]*prober.Client) {
	want := map[string]bool{}
	for _, b := range cfg.Bursts {
		ec := b.Schedule.OnEngineChange
		if ec == nil || clients[b.Target] == nil {
			continue
		}
		want[b.Name] = true
		w := s.watches[b.Name]
		if w != nil && w.target != b.Target {
			w.stop()
			w = nil
		}
		if w == nil {
			w = newEngineWatch(b.Target, ec.Settle.Std())
			if info := clients[b.Target].Info(); !info.Confirmed.IsZero() {
				f := FactsOf(clients[b.Target], info)
				w.known = &f
			}
			s.watches[b.Name] = w
		}
		w.mu.Lock()
		w.settle = ec.Settle.Std()
		w.mu.Unlock()
	}
	for name, w := range s.watches {
		if !want[name] {
			w.stop()
			delete(s.watches, name)
		}
	}
}

// TargetInfo takes a target's confirmed facts, from its info refresh; the
// daemon wires it to the target set.
func (s *Scheduler) TargetInfo(c *prober.Client, info prober.Info) {
	if info.ModelsError != "" || info.Confirmed.IsZero() {
		return // not confirmed now: a target that is down is still what it was
	}
	f := FactsOf(c, info)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.watches {
		if w.target == c.Target().Name {
			w.observe(f)
		}
	}
}
