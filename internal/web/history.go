package web

import (
	"sort"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/llmprobe/llmprobe/prober"
)

// history keeps the recent results of each (target, scenario), bounded, for
// the landing page. Failures are kept in a ring of their own, so a burst of
// successes never pushes the last failure out of sight. Apart from them it
// keeps the last `requests` results of any traffic, canary and burst, found
// by request id: the id an exemplar carries.
type history struct {
	recent, failures, requests int

	mu    sync.Mutex
	pairs map[[2]string]*pairHistory
	seq   uint64
	byID  requestRing
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
// failures (or misses) per pair, and the last `requests` of any pair or
// traffic by request id.
func newHistory(recent, failures, requests int) *history {
	return &history{recent: max(recent, 0), failures: max(failures, 0), requests: max(requests, 0),
		pairs: map[[2]string]*pairHistory{}, byID: requestRing{ids: map[string]*entry{}}}
}

// observe keeps a canary result in its pair's rings and by its id.
func (h *history) observe(r *prober.Result) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	e := &entry{ID: h.seq, Result: r}
	h.byID.push(ringEntry(e), h.requests)
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

// observeRequest keeps a result only by its id: burst requests, which
// would crowd the landing page's canary rings.
func (h *history) observeRequest(r *prober.Result) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	h.byID.push(ringEntry(&entry{ID: h.seq, Result: r}), h.requests)
}

// ringAnswerBytes is the answer a result in the ring of any traffic keeps:
// the landing page's preview. A scenario with a quality check keeps up to
// 64 KiB of it for the check, which a thousand kept results must not.
const ringAnswerBytes = 256

// ringEntry is e as the ring of any traffic keeps it: the answer cut to
// its preview, so a result costs at most ~4 KiB and 8 bytes per output
// token (config.Footprint's figure). The rest is shared, never changed.
func ringEntry(e *entry) *entry {
	if len(e.Answer) <= ringAnswerBytes {
		return e
	}
	r := *e.Result
	cut := ringAnswerBytes
	for cut > 0 && !utf8.RuneStart(r.Answer[cut]) {
		cut--
	}
	r.Answer = r.Answer[:cut] + "…" // a new string: the long one is let go
	return &entry{ID: e.ID, Result: &r}
}

// requestRing is the last results of any traffic, oldest at head once
// full, indexed by request id.
type requestRing struct {
	ring []*entry
	head int
	ids  map[string]*entry
}

func (q *requestRing) push(e *entry, size int) {
	if size == 0 {
		return
	}
	if len(q.ring) < size {
		q.ring = append(q.ring, e)
	} else {
		old := q.ring[q.head]
		if q.ids[old.RequestID] == old {
			delete(q.ids, old.RequestID)
		}
		q.ring[q.head] = e
		q.head = (q.head + 1) % size
	}
	if e.RequestID != "" {
		q.ids[e.RequestID] = e
	}
}

// oldestFirst returns the kept entries, oldest first.
func (q *requestRing) oldestFirst() []*entry {
	return append(append([]*entry(nil), q.ring[q.head:]...), q.ring[:q.head]...)
}

// keep drops the entries keep says no to.
func (q *requestRing) keep(keep func(*entry) bool) {
	all := q.oldestFirst()
	q.ring, q.head = q.ring[:0], 0
	clear(q.ids)
	for _, e := range all {
		if keep(e) {
			q.ring = append(q.ring, e)
			if e.RequestID != "" {
				q.ids[e.RequestID] = e
			}
		}
	}
	clear(q.ring[len(q.ring):cap(q.ring)]) // let dropped results be collected
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
	for _, e := range h.byID.ring {
		if e.ID == id {
			return e, true
		}
	}
	return nil, false
}

// byRequestID returns the entry of the request with the X-Request-Id id,
// if still kept: in the ring of any traffic, or in a canary pair's.
func (h *history) byRequestID(id string) (*entry, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	// The pairs first: they keep a canary's whole answer.
	for _, ph := range h.pairs {
		for _, s := range [][]*entry{ph.recent, ph.failed} {
			for _, e := range s {
				if e.RequestID == id {
					return e, true
				}
			}
		}
	}
	e, ok := h.byID.ids[id]
	return e, ok
}

// holding says what the ring of any traffic holds: how many results
// (of at most h.requests) and when the oldest was due.
func (h *history) holding() (n int, oldest time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.byID.ring) > 0 {
		oldest = h.byID.ring[h.byID.head].Sched // head is 0 until the ring is full
	}
	return len(h.byID.ring), oldest
}

// forget drops the canary pairs keep says no to, also from the ring of
// any traffic; burst results stay there until pushed out.
func (h *history) forget(keep func(target, scenario string) bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for k := range h.pairs {
		if !keep(k[0], k[1]) {
			delete(h.pairs, k)
		}
	}
	h.byID.keep(func(e *entry) bool { return e.Traffic == prober.TrafficBurst || keep(e.Target, e.Scenario) })
}
