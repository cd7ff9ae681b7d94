package prober

import (
	"sort"
	"sync"
)

// History keeps the recent results of each (target, scenario), bounded, for
// the landing page. Failures are kept in a ring of their own, so a burst of
// successes never pushes the last failure out of sight.
type History struct {
	recent, failures int

	mu    sync.Mutex
	pairs map[[2]string]*pairHistory
	seq   uint64
}

type pairHistory struct {
	recent, failed []*Entry
}

// Entry is one result in the history, with an id for its detail page.
type Entry struct {
	ID uint64
	*Result
}

// NewHistory keeps the last `recent` results and the last `failures` failures per pair.
func NewHistory(recent, failures int) *History {
	return &History{recent: recent, failures: failures, pairs: map[[2]string]*pairHistory{}}
}

// Observe implements Observer.
func (h *History) Observe(r *Result) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	e := &Entry{ID: h.seq, Result: r}
	k := [2]string{r.Target, r.Scenario}
	ph := h.pairs[k]
	if ph == nil {
		ph = &pairHistory{}
		h.pairs[k] = ph
	}
	ph.recent = pushBounded(ph.recent, e, h.recent)
	if r.Outcome != OutcomeSuccess || !r.Good {
		ph.failed = pushBounded(ph.failed, e, h.failures)
	}
}

func pushBounded(s []*Entry, e *Entry, limit int) []*Entry {
	s = append(s, e)
	if len(s) > limit {
		s = append(s[:0], s[len(s)-limit:]...)
	}
	return s
}

// PairHistory is one pair's entries, newest first.
type PairHistory struct {
	Target, Scenario string
	Recent, Failures []*Entry
}

// Snapshot returns every pair's history, sorted by target then scenario.
func (h *History) Snapshot() []PairHistory {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]PairHistory, 0, len(h.pairs))
	for k, ph := range h.pairs {
		out = append(out, PairHistory{Target: k[0], Scenario: k[1], Recent: newestFirst(ph.recent), Failures: newestFirst(ph.failed)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Target != out[j].Target {
			return out[i].Target < out[j].Target
		}
		return out[i].Scenario < out[j].Scenario
	})
	return out
}

func newestFirst(s []*Entry) []*Entry {
	out := make([]*Entry, len(s))
	for i, e := range s {
		out[len(s)-1-i] = e
	}
	return out
}

// Get returns the entry with the given id, if still kept.
func (h *History) Get(id uint64) (*Entry, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ph := range h.pairs {
		for _, s := range [][]*Entry{ph.recent, ph.failed} {
			for _, e := range s {
				if e.ID == id {
					return e, true
				}
			}
		}
	}
	return nil, false
}

// Forget drops pairs that are no longer configured.
func (h *History) Forget(keep func(target, scenario string) bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for k := range h.pairs {
		if !keep(k[0], k[1]) {
			delete(h.pairs, k)
		}
	}
}
