package history

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/stats"
)

// answer is a streamed canary answer due at sched with the given TTFT and
// TPOT over 8 output tokens.
func answer(sched time.Time, ttft, tpot time.Duration, good bool) *prober.Result {
	return &prober.Result{Target: "a", Scenario: "s", Outcome: prober.OutcomeSuccess, Good: good, Sched: sched,
		TTFT: ttft, TPOT: tpot, OutputTokens: 8, OutputChunks: 8}
}

var hour0 = time.Date(2026, 11, 28, 14, 0, 0, 0, time.UTC)

// Each result lands in the minute it was due; a minute counts the good
// among the judged, and only successful answers' latencies.
func TestTrendBuckets(t *testing.T) {
	var tr Trend
	tr.Observe(answer(hour0.Add(10*time.Second), 100*time.Millisecond, 10*time.Millisecond, true))
	tr.Observe(answer(hour0.Add(59*time.Second), 300*time.Millisecond, 30*time.Millisecond, false)) // a miss
	tr.Observe(&prober.Result{Outcome: prober.OutcomeConnectionError, Sched: hour0.Add(20 * time.Second)})
	tr.Observe(answer(hour0.Add(61*time.Second), 200*time.Millisecond, 20*time.Millisecond, true))
	// An embeddings answer: judged and good, but no TTFT and no TPOT.
	tr.Observe(&prober.Result{Outcome: prober.OutcomeSuccess, Good: true, Sched: hour0.Add(62 * time.Second)})
	// An unstreamed answer: its e2e is its one latency.
	tr.Observe(&prober.Result{Outcome: prober.OutcomeSuccess, Good: true, Unstreamed: true, TTFT: time.Second, OutputTokens: 9, Sched: hour0.Add(63 * time.Second)})

	pts := tr.Points(hour0.Add(90 * time.Second))
	if len(pts) != TrendMinutes {
		t.Fatalf("%d points, want %d", len(pts), TrendMinutes)
	}
	first, second := pts[TrendMinutes-2], pts[TrendMinutes-1]
	if !first.Start.Equal(hour0) || !second.Start.Equal(hour0.Add(time.Minute)) {
		t.Fatalf("the last two minutes start at %v and %v, want 14:00 and 14:01", first.Start, second.Start)
	}
	if first.Judged != 3 || first.Succeeded != 2 || first.Good != 1 || first.TTFT.Count() != 2 || first.TPOT.Count() != 2 {
		t.Errorf("14:00: %d of %d good, %d succeeded, %d TTFT and %d TPOT samples; want 1 of 3, 2, 2 and 2", first.Good, first.Judged, first.Succeeded, first.TTFT.Count(), first.TPOT.Count())
	}
	if v, k := first.TTFT.Figure(); k != KindMax || v != 0.3 {
		t.Errorf("14:00 TTFT figure %v (kind %d), want the max 0.3 s: 2 samples are too few for a p99", v, k)
	}
	if second.Judged != 3 || second.Good != 3 || second.TTFT.Count() != 1 || second.TPOT.Count() != 1 {
		t.Errorf("14:01: %d of %d good, %d TTFT and %d TPOT samples; want 3 of 3, 1 and 1", second.Good, second.Judged, second.TTFT.Count(), second.TPOT.Count())
	}
	for _, p := range pts[:TrendMinutes-2] {
		if p.Judged != 0 || p.TTFT.Count() != 0 {
			t.Fatalf("%v has results, none were due then", p.Start)
		}
		if _, k := p.TTFT.Figure(); k != KindNone {
			t.Fatalf("%v: a figure without samples", p.Start)
		}
	}
}

// A minute an hour old leaves the trend, and its bucket is reused for the
// new minute, not added to; a result due before what its bucket holds is
// dropped.
func TestTrendExpiry(t *testing.T) {
	var tr Trend
	tr.Observe(answer(hour0, 100*time.Millisecond, 10*time.Millisecond, true))
	at := func(now time.Time) Point {
		for _, p := range tr.Points(now) {
			if p.Start.Equal(hour0) {
				return p
			}
		}
		return Point{}
	}
	if p := at(hour0.Add(59*time.Minute + 59*time.Second)); p.Judged != 1 {
		t.Errorf("at 14:59:59 the 14:00 minute has %d results, want 1", p.Judged)
	}
	if p := at(hour0.Add(time.Hour)); p.Judged != 0 {
		t.Errorf("at 15:00 the 14:00 minute is still in the trend")
	}
	if pts := tr.Points(hour0.Add(time.Hour)); pts[TrendMinutes-1].Judged != 0 {
		t.Error("14:00's results show as 15:00's: a reused bucket was read without its minute")
	}
	tr.Observe(answer(hour0.Add(time.Hour+time.Second), 500*time.Millisecond, 50*time.Millisecond, false))
	tr.Observe(answer(hour0.Add(2*time.Second), 900*time.Millisecond, 90*time.Millisecond, true)) // late: its bucket moved on
	now := tr.Points(hour0.Add(time.Hour + 30*time.Second))[TrendMinutes-1]
	if now.Judged != 1 || now.Good != 0 || now.TTFT.Max() != 0.5 {
		t.Errorf("15:00: %d of %d good, TTFT max %v; want 0 of 1 and 0.5 s", now.Good, now.Judged, now.TTFT.Max())
	}
}

// From 368 samples a minute's figure is its p99, exactly stats.Quantile's;
// below it the max; past what the kept tail covers, an upper bound.
func TestTailFigure(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 5, P99Needs - 1, P99Needs, 600, 1501, 1502, 5000} {
		var tail Tail
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = rng.ExpFloat64() / 10
			tail.add(xs[i])
		}
		slices.Sort(xs)
		got, kind := tail.Figure()
		p99 := stats.Quantile(xs, 0.99)
		switch {
		case n < P99Needs:
			if kind != KindMax || got != xs[n-1] {
				t.Errorf("n=%d: %v (kind %d), want the max %v: too few for a p99", n, got, kind, xs[n-1])
			}
		case n <= 1501:
			if kind != KindP99 || math.Abs(got-p99) > 1e-12 {
				t.Errorf("n=%d: %v (kind %d), want the exact p99 %v", n, got, kind, p99)
			}
		default:
			if kind != KindP99AtMost || got < p99 {
				t.Errorf("n=%d: %v (kind %d), want an upper bound of the p99 %v", n, got, kind, p99)
			}
		}
		if tail.Count() != n || tail.Max() != xs[n-1] {
			t.Errorf("n=%d: count %d, max %v; want %d and %v", n, tail.Count(), tail.Max(), n, xs[n-1])
		}
	}
}

// A trend's memory is fixed by construction: Observe allocates nothing,
// whatever it is given, and a trend is under 20 KiB.
func TestTrendFixedSize(t *testing.T) {
	var tr Trend
	i := 0
	allocs := testing.AllocsPerRun(10000, func() {
		i++
		tr.Observe(answer(hour0.Add(time.Duration(i)*100*time.Millisecond), time.Duration(i)*time.Microsecond, time.Millisecond, true))
	})
	if allocs != 0 {
		t.Errorf("Observe allocates %v times per result: a trend grows with its input", allocs)
	}
	if size := unsafe.Sizeof(tr); size > 20<<10 {
		t.Errorf("a trend is %d bytes, want under 20 KiB", size)
	}
}

// Observe runs on every canary result.
func BenchmarkTrendObserve(b *testing.B) {
	var tr Trend
	rs := make([]*prober.Result, 1024)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range rs {
		rs[i] = answer(hour0.Add(time.Duration(i)*100*time.Millisecond), time.Duration(rng.ExpFloat64()*float64(100*time.Millisecond)), 10*time.Millisecond, true)
	}
	b.ResetTimer()
	for i := range b.N {
		tr.Observe(rs[i%len(rs)])
	}
}

// The history keeps each canary pair's trend beside its rings and forgets
// it with the pair; burst requests stay out of it.
func TestHistoryTrend(t *testing.T) {
	h := New(2, 2, 4)
	h.Observe(answer(hour0, 100*time.Millisecond, 10*time.Millisecond, true))
	h.Observe(answer(hour0.Add(time.Second), 200*time.Millisecond, 10*time.Millisecond, true))
	h.Observe(answer(hour0.Add(2*time.Second), 300*time.Millisecond, 10*time.Millisecond, false)) // pushes the first out of the ring
	burst := answer(hour0, 5*time.Second, time.Second, false)
	burst.Traffic = prober.TrafficBurst
	h.ObserveRequest(burst)
	snap := h.Snapshot(hour0.Add(30 * time.Second))
	if len(snap) != 1 || len(snap[0].Trend) != TrendMinutes {
		t.Fatalf("snapshot %+v, want one pair with %d minutes", snap, TrendMinutes)
	}
	if now := snap[0].Trend[TrendMinutes-1]; now.Judged != 3 || now.Good != 2 || now.TTFT.Max() != 0.3 {
		t.Errorf("the minute: %d of %d good, TTFT max %v; want 2 of 3 (the ring's bound does not bound the trend), 0.3 s", now.Good, now.Judged, now.TTFT.Max())
	}
	h.Forget(func(string, string) bool { return false })
	h.Observe(answer(hour0.Add(3*time.Second), 100*time.Millisecond, 10*time.Millisecond, true))
	if now := h.Snapshot(hour0.Add(30 * time.Second))[0].Trend[TrendMinutes-1]; now.Judged != 1 {
		t.Errorf("after the pair was forgotten and probed again: %d judged, want 1", now.Judged)
	}
}
