package web

import (
	"sort"
	"sync"

	"github.com/llmprobe/llmprobe/prober"
)

// history keeps the recent results of each (target, scenario), bounded, for
// the landing page. Failures are kept in a ring of their own, so a burst of
// successes never pushes the last failure out of sight.
type history struct {
	recent, failures int

	mu    sync.Mutex
	pairs map[[2]string]*pairHistory
	seq   uint64
}

type pairHistory struct {
	recent, failed []*entry
}

// entry is one result in the history, with an id for its detail page.
type entry struct {
	ID uint64
	*prober.Result
}

// newHistory keeps the last `recent` results and the last `failures`
// failures (or misses) per pair.
func newHistory(recent, failures int) *history {
	return &history{recent: max(recent, 0), failures: max(failures, 0), pairs: map[[2]string]*pairHistory{}}
}

func (h *history) observe(r *prober.Result) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	e := &entry{ID: h.seq, Result: r}
	k := [2]string{r.Target, r.Scenario}
	ph := h.pairs[k]
	if ph == nil {
		ph = &pairHistory{}
		h.pairs[k] = ph
	}
	ph.recent = pushBounded(ph.recent, e, h.recent)
	if r.Outcome != prober.OutcomeSuccess || !r.Good {
		ph.failed = pushBounded(ph.failed, e, h.failures)
	}
}

// pushBounded appends e and drops the oldest beyond limit, reusing the
// slice's array so a long-running pair allocates nothing new.
func pushBounded(s []*entry, e *entry, limit int) []*entry {
	s = append(s, e)
	if len(s) > limit {
		n := copy(s, s[len(s)-limit:])
		clear(s[n:]) // let dropped results be collected
		s = s[:n]
	}
	return s
}

// pairEntries is one pair's entries, newest first.
type pairEntries struct {
	Target, Scenario string
	Recent, Failures []*entry
}

// snapshot returns every pair's history, sorted by target then scenario.
func (h *history) snapshot() []pairEntries {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]pairEntries, 0, len(h.pairs))
	for k, ph := range h.pairs {
		out = append(out, pairEntries{Target: k[0], Scenario: k[1], Recent: newestFirst(ph.recent), Failures: newestFirst(ph.failed)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Target != out[j].Target {
			return out[i].Target < out[j].Target
		}
		return out[i].Scenario < out[j].Scenario
	})
	return out
}

func newestFirst(s []*entry) []*entry {
	out := make([]*entry, len(s))
	for i, e := range s {
		out[len(s)-1-i] = e
	}
	return out
}

// get returns the entry with the given id, if still kept.
func (h *history) get(id uint64) (*entry, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ph := range h.pairs {
		for _, s := range [][]*entry{ph.recent, ph.failed} {
			for _, e := range s {
				if e.ID == id {
					return e, true
				}
			}
		}
	}
	return nil, false
}

// forget drops the pairs keep says no.
func (h *history) forget(keep func(target, scenario string) bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for k := range h.pairs {
		if !keep(k[0], k[1]) {
			delete(h.pairs, k)
		}
	}
}
