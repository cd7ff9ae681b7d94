package history

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/prober"
)

func result(target, scenario string, outcome prober.Outcome, good bool) *prober.Result {
	return &prober.Result{Target: target, Scenario: scenario, Outcome: outcome, Good: good, Sched: time.Now()}
}

func ids(entries []*Entry) []uint64 {
	out := make([]uint64, len(entries))
	for i, e := range entries {
		out[i] = e.ID
	}
	return out
}

// The ring keeps the newest `recent` results per pair, newest first, and
// failures (errors and SLO misses) in a ring of their own, so a run of
// successes never pushes the last failure out of sight.
func TestHistoryRing(t *testing.T) {
	h := New(3, 2, 0)
	h.Observe(result("a", "s", prober.OutcomeTimeout, false))  // 1: failure
	h.Observe(result("a", "s", prober.OutcomeSuccess, false))  // 2: a miss
	h.Observe(result("a", "s", prober.OutcomeRejected, false)) // 3: failure, pushes 1 out of the failure ring
	for range 5 {
		h.Observe(result("a", "s", prober.OutcomeSuccess, true)) // 4..8
	}
	h.Observe(result("b", "s", prober.OutcomeSuccess, true)) // 9

	snap := h.Snapshot(time.Now())
	if len(snap) != 2 || snap[0].Target != "a" || snap[1].Target != "b" {
		t.Fatalf("pairs %+v, want a then b", snap)
	}
	if got := ids(snap[0].Recent); fmt.Sprint(got) != "[8 7 6]" {
		t.Errorf("recent = %v, want [8 7 6]", got)
	}
	if got := ids(snap[0].Failures); fmt.Sprint(got) != "[3 2]" {
		t.Errorf("failures = %v, want [3 2]: misses count, the oldest failure goes", got)
	}
	if got := ids(snap[1].Recent); fmt.Sprint(got) != "[9]" || len(snap[1].Failures) != 0 {
		t.Errorf("pair b = %v / %v", got, ids(snap[1].Failures))
	}

	// A failure pushed out of the recent ring is still there to link to.
	if e, ok := h.Get(2); !ok || e.Outcome != prober.OutcomeSuccess || e.Good {
		t.Errorf("get(2) = %v, %v: a kept failure must be found", e, ok)
	}
	if _, ok := h.Get(1); ok {
		t.Error("get(1) found a result no ring keeps")
	}
	if _, ok := h.Get(5); ok {
		t.Error("get(5) found a success pushed out of the recent ring")
	}

	h.Forget(func(target, _ string) bool { return target == "b" })
	if snap := h.Snapshot(time.Now()); len(snap) != 1 || snap[0].Target != "b" {
		t.Errorf("after forget: %+v", snap)
	}
	if _, ok := h.Get(8); ok {
		t.Error("a forgotten pair's result is still found")
	}
}

// A ring of size zero keeps nothing and does not panic.
func TestHistoryZeroSize(t *testing.T) {
	h := New(0, 0, 0)
	h.Observe(result("a", "s", prober.OutcomeTimeout, false))
	if snap := h.Snapshot(time.Now()); len(snap) != 1 || len(snap[0].Recent) != 0 || len(snap[0].Failures) != 0 {
		t.Errorf("snapshot = %+v", snap)
	}
	h2 := New(-1, -5, -1)
	h2.Observe(result("a", "s", prober.OutcomeSuccess, true))
}

// The ring's backing array does not grow with the results it has seen, and
// dropped results are not held.
func TestHistoryBoundedStorage(t *testing.T) {
	h := New(4, 4, 0)
	for range 1000 {
		h.Observe(result("a", "s", prober.OutcomeTimeout, false))
	}
	ph := h.pairs[[2]string{"a", "s"}]
	if cap(ph.recent) > 8 || cap(ph.failed) > 8 {
		t.Errorf("capacity %d/%d after 1000 results: the ring grows", cap(ph.recent), cap(ph.failed))
	}
	for _, s := range [][]*Entry{ph.recent[len(ph.recent):cap(ph.recent)], ph.failed[len(ph.failed):cap(ph.failed)]} {
		for _, e := range s {
			if e != nil {
				t.Fatal("a dropped result is still referenced")
			}
		}
	}
}

// Observers run on many goroutines at once.
func TestHistoryConcurrent(t *testing.T) {
	h := New(5, 5, 0)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				h.Observe(result(fmt.Sprint("t", g%2), "s", prober.OutcomeSuccess, i%3 != 0))
				h.Snapshot(time.Now())
				h.Get(uint64(i))
			}
		}()
	}
	wg.Wait()
	total := 0
	for _, p := range h.Snapshot(time.Now()) {
		total += len(p.Recent)
		if p.Recent[0].ID <= p.Recent[len(p.Recent)-1].ID {
			t.Errorf("%s: not newest first: %v", p.Target, ids(p.Recent))
		}
	}
	if total != 10 || h.seq != 1600 {
		t.Errorf("kept %d of seq %d, want 10 of 1600", total, h.seq)
	}
}

func withID(r *prober.Result, n int) *prober.Result {
	r.RequestID = fmt.Sprintf("%032x", n)
	return r
}

// The ring of any traffic keeps the last `requests` results by request id,
// canary and burst, bounded in slots and in its index; the oldest go.
func TestHistoryRequestRing(t *testing.T) {
	h := New(2, 2, 3)
	for i := 1; i <= 4; i++ {
		r := withID(result("a", "s", prober.OutcomeSuccess, true), i)
		r.Traffic = prober.TrafficBurst
		h.ObserveRequest(r)
	}
	for i := 1; i <= 4; i++ {
		e, ok := h.ByRequestID(fmt.Sprintf("%032x", i))
		if ok != (i > 1) {
			t.Errorf("request %d found %v, want %v: the ring keeps the last 3", i, ok, i > 1)
		}
		if ok && e.RequestID != fmt.Sprintf("%032x", i) {
			t.Errorf("request %d found %s", i, e.RequestID)
		}
	}
	if len(h.Snapshot(time.Now())) != 0 {
		t.Error("burst requests reached the canary pairs of the landing page")
	}
	// Probe numbers of burst requests work too.
	if e, ok := h.Get(4); !ok || e.RequestID != fmt.Sprintf("%032x", 4) {
		t.Errorf("get(4) = %v, %v", e, ok)
	}
	if n, oldest := h.Holding(); n != 3 || oldest.IsZero() {
		t.Errorf("holding %d, oldest %v; want 3", n, oldest)
	}

	// A canary result goes to its pair and to the ring; a canary pair
	// keeps its results after the ring lets them go.
	h.Observe(withID(result("c", "s", prober.OutcomeTimeout, false), 100))
	for i := 5; i <= 8; i++ {
		r := withID(result("a", "s", prober.OutcomeSuccess, true), i)
		r.Traffic = prober.TrafficBurst
		h.ObserveRequest(r)
	}
	if _, ok := h.ByRequestID(fmt.Sprintf("%032x", 100)); !ok {
		t.Error("a canary failure its pair still keeps is not found by id")
	}
	if len(h.byID.ids) != 3 || len(h.byID.ring) != 3 || cap(h.byID.ring) > 4 {
		t.Errorf("index %d, ring %d (cap %d) after 9 results: want 3", len(h.byID.ids), len(h.byID.ring), cap(h.byID.ring))
	}

	// Forgetting a canary pair drops it from the ring too; burst results stay.
	h.Observe(withID(result("c", "s", prober.OutcomeSuccess, true), 101))
	h.Forget(func(target, _ string) bool { return target != "c" })
	if _, ok := h.ByRequestID(fmt.Sprintf("%032x", 101)); ok {
		t.Error("a forgotten pair's result is still found by id")
	}
	if _, ok := h.ByRequestID(fmt.Sprintf("%032x", 8)); !ok {
		t.Error("forget dropped a burst result")
	}
	// A long answer (a quality check keeps 64 KiB) is cut to its preview
	// in the ring; the canary pair keeps it whole.
	long := withID(result("a", "s", prober.OutcomeSuccess, true), 200)
	long.Answer = strings.Repeat("é", 40<<10)
	long.Traffic = prober.TrafficBurst
	h.ObserveRequest(long)
	if e, ok := h.ByRequestID(long.RequestID); !ok || len(e.Answer) > ringAnswerBytes+len("…") || !strings.HasPrefix(long.Answer, strings.TrimSuffix(e.Answer, "…")) {
		t.Errorf("the ring keeps %d bytes of a long answer, want its %d-byte preview, cut on a rune", len(e.Answer), ringAnswerBytes)
	}
	canary := withID(result("a", "s", prober.OutcomeSuccess, true), 201)
	canary.Answer = long.Answer
	h.Observe(canary)
	if e, _ := h.ByRequestID(canary.RequestID); e.Answer != long.Answer {
		t.Error("a canary's page lost its answer while its pair keeps it")
	}

	// With no ring at all, nothing is kept by id and nothing panics.
	h0 := New(1, 1, 0)
	h0.ObserveRequest(withID(result("a", "s", prober.OutcomeSuccess, true), 1))
	if _, ok := h0.ByRequestID(fmt.Sprintf("%032x", 1)); ok {
		t.Error("a ring of size 0 kept a result")
	}
}
