// Package history keeps the recent probes of each (target, scenario), its
// failures apart, its last hour in one-minute buckets, and the last
// requests of any traffic by request id, each bounded, for the pages that
// show them.
package history

import (
	"sort"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/llmprobe/llmprobe/prober"
)

// History keeps the recent results of each (target, scenario), bounded, for
// the landing page. Failures are kept in a ring of their own, so a burst of
// successes never pushes the last failure out of sight. Apart from them it
// keeps the last `requests` results of any traffic, canary and burst, found
// by request id: the id an exemplar carries.
type History struct {
	recent, failures, requests int

	mu    sync.Mutex
	pairs map[[2]string]*pairHistory
	seq   uint64
	byID  requestRing
}

type pairHistory struct {
	recent, failed []*Entry
	trend          Trend
}

// Entry is one result in the history, with an id for its detail page.
type Entry struct {
	ID uint64
	*prober.Result
}

// New keeps the last `recent` results and the last `failures`
// failures (or misses) per pair, and the last `requests` of any pair or
// traffic by request id.
func New(recent, failures, requests int) *History {
	return &History{recent: max(recent, 0), failures: max(failures, 0), requests: max(requests, 0),
		pairs: map[[2]string]*pairHistory{}, byID: requestRing{ids: map[string]*Entry{}}}
}

// Observe keeps a canary result in its pair's rings and by its id.
func (h *History) Observe(r *prober.Result) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	e := &Entry{ID: h.seq, Result: r}
	h.byID.push(ringEntry(e), h.requests)
	k := [2]string{r.Target, r.Scenario}
	ph := h.pairs[k]
	if ph == nil {
		ph = &pairHistory{}
		h.pairs[k] = ph
	}
	ph.recent = pushBounded(ph.recent, e, h.recent)
	ph.trend.Observe(r)
	if r.Outcome != prober.OutcomeSuccess || !r.Good {
		ph.failed = pushBounded(ph.failed, e, h.failures)
	}
}

// ObserveRequest keeps a result only by its id: burst requests, which
// would crowd the landing page's canary rings.
func (h *History) ObserveRequest(r *prober.Result) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	h.byID.push(ringEntry(&Entry{ID: h.seq, Result: r}), h.requests)
}

// ringAnswerBytes is the answer a result in the ring of any traffic keeps:
// the landing page's preview. A scenario with a quality check keeps up to
// 64 KiB of it for the check, which a thousand kept results must not.
const ringAnswerBytes = 256

// ringEntry is e as the ring of any traffic keeps it: the answer cut to
// its preview, so a result costs at most ~4 KiB and 8 bytes per output
// token (plan.Burst's Footprint). The rest is shared, never changed.
func ringEntry(e *Entry) *Entry {
	if len(e.Answer) <= ringAnswerBytes {
		return e
	}
	r := *e.Result
	cut := ringAnswerBytes
	for cut > 0 && !utf8.RuneStart(r.Answer[cut]) {
		cut--
	}
	r.Answer = r.Answer[:cut] + "…" // a new string: the long one is let go
	return &Entry{ID: e.ID, Result: &r}
}

// requestRing is the last results of any traffic, oldest at head once
// full, indexed by request id.
type requestRing struct {
	ring []*Entry
	head int
	ids  map[string]*Entry
}

func (q *requestRing) push(e *Entry, size int) {
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
func (q *requestRing) oldestFirst() []*Entry {
	return append(append([]*Entry(nil), q.ring[q.head:]...), q.ring[:q.head]...)
}

// keep drops the entries keep says no to.
func (q *requestRing) keep(keep func(*Entry) bool) {
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
func pushBounded(s []*Entry, e *Entry, limit int) []*Entry {
	s = append(s, e)
	if len(s) > limit {
		n := copy(s, s[len(s)-limit:])
		clear(s[n:]) // let dropped results be collected
		s = s[:n]
	}
	return s
}

// Pair is one pair's entries, newest first, and its last hour.
type Pair struct {
	Target, Scenario string
	Recent, Failures []*Entry
	Trend            []Point // TrendMinutes minutes, oldest first
}

// Snapshot returns every pair's history as of now, sorted by target then
// scenario.
func (h *History) Snapshot(now time.Time) []Pair {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Pair, 0, len(h.pairs))
	for k, ph := range h.pairs {
		out = append(out, Pair{Target: k[0], Scenario: k[1], Recent: newestFirst(ph.recent), Failures: newestFirst(ph.failed), Trend: ph.trend.Points(now)})
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
	if e := h.inPairs(func(e *Entry) bool { return e.ID == id }); e != nil {
		return e, true
	}
	for _, e := range h.byID.ring {
		if e.ID == id {
			return e, true
		}
	}
	return nil, false
}

// ByRequestID returns the entry of the request with the X-Request-Id id,
// if still kept: in the ring of any traffic, or in a canary pair's.
func (h *History) ByRequestID(id string) (*Entry, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	// The pairs first: they keep a canary's whole answer.
	if e := h.inPairs(func(e *Entry) bool { return e.RequestID == id }); e != nil {
		return e, true
	}
	e, ok := h.byID.ids[id]
	return e, ok
}

// inPairs returns the first entry of a canary pair that match accepts, or
// nil. Called with mu held.
func (h *History) inPairs(match func(*Entry) bool) *Entry {
	for _, ph := range h.pairs {
		for _, s := range [][]*Entry{ph.recent, ph.failed} {
			for _, e := range s {
				if match(e) {
					return e
				}
			}
		}
	}
	return nil
}

// Holding says what the ring of any traffic holds: how many results
// (of at most h.requests) and when the oldest was due.
func (h *History) Holding() (n int, oldest time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.byID.ring) > 0 {
		oldest = h.byID.ring[h.byID.head].Sched // head is 0 until the ring is full
	}
	return len(h.byID.ring), oldest
}

// Forget drops the canary pairs keep says no to, also from the ring of
// any traffic; burst results stay there until pushed out.
func (h *History) Forget(keep func(target, scenario string) bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for k := range h.pairs {
		if !keep(k[0], k[1]) {
			delete(h.pairs, k)
		}
	}
	h.byID.keep(func(e *Entry) bool { return e.Traffic == prober.TrafficBurst || keep(e.Target, e.Scenario) })
}

// Bounds are what the history keeps at most: results per pair, failures
// per pair, and requests of any traffic by id.
func (h *History) Bounds() (recent, failures, requests int) {
	return h.recent, h.failures, h.requests
}
