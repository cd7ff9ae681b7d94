package web

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/prober"
)

func result(target, scenario string, outcome prober.Outcome, good bool) *prober.Result {
	return &prober.Result{Target: target, Scenario: scenario, Outcome: outcome, Good: good, Sched: time.Now()}
}

func ids(entries []*entry) []uint64 {
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
	h := newHistory(3, 2, 0)
	h.observe(result("a", "s", prober.OutcomeTimeout, false))  // 1: failure
	h.observe(result("a", "s", prober.OutcomeSuccess, false))  // 2: a miss
	h.observe(result("a", "s", prober.OutcomeRejected, false)) // 3: failure, pushes 1 out of the failure ring
	for range 5 {
		h.observe(result("a", "s", prober.OutcomeSuccess, true)) // 4..8
	}
	h.observe(result("b", "s", prober.OutcomeSuccess, true)) // 9

	snap := h.snapshot()
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
	if e, ok := h.get(2); !ok || e.Outcome != prober.OutcomeSuccess || e.Good {
		t.Errorf("get(2) = %v, %v: a kept failure must be found", e, ok)
	}
	if _, ok := h.get(1); ok {
		t.Error("get(1) found a result no ring keeps")
	}
	if _, ok := h.get(5); ok {
		t.Error("get(5) found a success pushed out of the recent ring")
	}

	h.forget(func(target, _ string) bool { return target == "b" })
	if snap := h.snapshot(); len(snap) != 1 || snap[0].Target != "b" {
		t.Errorf("after forget: %+v", snap)
	}
	if _, ok := h.get(8); ok {
		t.Error("a forgotten pair's result is still found")
	}
}

// A ring of size zero keeps nothing and does not panic.
func TestHistoryZeroSize(t *testing.T) {
	h := newHistory(0, 0, 0)
	h.observe(result("a", "s", prober.OutcomeTimeout, false))
	if snap := h.snapshot(); len(snap) != 1 || len(snap[0].Recent) != 0 || len(snap[0].Failures) != 0 {
		t.Errorf("snapshot = %+v", snap)
	}
	h2 := newHistory(-1, -5, -1)
	h2.observe(result("a", "s", prober.OutcomeSuccess, true))
}

// The ring's backing array does not grow with the results it has seen, and
// dropped results are not held.
func TestHistoryBoundedStorage(t *testing.T) {
	h := newHistory(4, 4, 0)
	for range 1000 {
		h.observe(result("a", "s", prober.OutcomeTimeout, false))
	}
	ph := h.pairs[[2]string{"a", "s"}]
	if cap(ph.recent) > 8 || cap(ph.failed) > 8 {
		t.Errorf("capacity %d/%d after 1000 results: the ring grows", cap(ph.recent), cap(ph.failed))
	}
	for _, s := range [][]*entry{ph.recent[len(ph.recent):cap(ph.recent)], ph.failed[len(ph.failed):cap(ph.failed)]} {
		for _, e := range s {
			if e != nil {
				t.Fatal("a dropped result is still referenced")
			}
		}
	}
}

// Observers run on many goroutines at once.
func TestHistoryConcurrent(t *testing.T) {
	h := newHistory(5, 5, 0)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				h.observe(result(fmt.Sprint("t", g%2), "s", prober.OutcomeSuccess, i%3 != 0))
				h.snapshot()
				h.get(uint64(i))
			}
		}()
	}
	wg.Wait()
	total := 0
	for _, p := range h.snapshot() {
		total += len(p.Recent)
		if p.Recent[0].ID <= p.Recent[len(p.Recent)-1].ID {
			t.Errorf("%s: not newest first: %v", p.Target, ids(p.Recent))
		}
	}
	if total != 10 || h.seq != 1600 {
		t.Errorf("kept %d of seq %d, want 10 of 1600", total, h.seq)
	}
}
