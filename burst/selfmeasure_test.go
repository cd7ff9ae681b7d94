package burst

import (
	"context"
	"math"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/config/workload"
	"github.com/llmprobe/llmprobe/report/render"
	"github.com/llmprobe/llmprobe/stats"
)

// The runtime's histograms as TailOf reads them: bucket i holds
// [Buckets[i], Buckets[i+1]), the first from -Inf, the last to +Inf.
var buckets = []float64{math.Inf(-1), 0, 0.001, 0.002, 0.004, 0.008, 140737.488355328, math.Inf(1)}

func hist(counts ...uint64) *metrics.Float64Histogram {
	c := make([]uint64, len(buckets)-1)
	copy(c, counts)
	return &metrics.Float64Histogram{Counts: c, Buckets: buckets}
}

func TestTailOf(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		name          string
		before, after *metrics.Float64Histogram
		want          stats.Tail
	}{
		{"nothing new is n/a, not 0", hist(0, 5, 2), hist(0, 5, 2), stats.Tail{}},
		{"one sample: its bucket's upper bound", hist(), hist(0, 0, 1), stats.Tail{Count: 1, P99: f(0.002), Max: f(0.002)}},
		{"only the run's samples count", hist(0, 1000, 0, 0, 7), hist(0, 1099, 0, 0, 8), stats.Tail{Count: 100, P99: f(0.001), Max: f(0.008)}},
		{"p99 is the nearest rank", hist(), hist(0, 98, 0, 2), stats.Tail{Count: 100, P99: f(0.004), Max: f(0.004)}},
		{"zero-length waits", hist(), hist(0, 3), stats.Tail{Count: 3, P99: f(0.001), Max: f(0.001)}},
		{"the open top bucket counts as its lower edge", hist(), hist(0, 1, 0, 0, 0, 0, 1), stats.Tail{Count: 2, P99: f(140737.488355328), Max: f(140737.488355328)}},
		{"a count that seems to fall adds nothing", hist(0, 10, 5), hist(0, 12, 3), stats.Tail{Count: 2, P99: f(0.001), Max: f(0.001)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := TailOf(tc.before, tc.after)
			if got.Count != tc.want.Count || !sameFigure(got.P99, tc.want.P99) || !sameFigure(got.Max, tc.want.Max) {
				t.Errorf("got count %d p99 %v max %v, want count %d p99 %v max %v", got.Count, show(got.P99), show(got.Max), tc.want.Count, show(tc.want.P99), show(tc.want.Max))
			}
		})
	}
}

func sameFigure(a, b *float64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

func show(v *float64) any {
	if v == nil {
		return "n/a"
	}
	return *v
}

// A burst well within the prober's means, 30 requests at 10/s, carries a
// bound with samples on both sides and no saturation. Its objective is a
// TTFT of 1 s, so only a host that starves the test process by 100 ms at
// the 99th percentile would call it saturated: and then it would be.
func TestBoundAtLowRate(t *testing.T) {
	c, _ := serialSim(t, 64)
	b := burstOf(config.ArrivalPoisson, 10, 0)
	b.Requests = 30
	s := burstScenario()
	s.SLO.TTFT = config.Duration(time.Second)
	rep, err := Runner{Client: c}.Run(context.Background(), b, []workload.Scenario{s})
	if err != nil {
		t.Fatal(err)
	}
	e := rep.ErrorBound
	if rep.Requests != 30 || e == nil || e.Runtime == nil || e.P99 == nil || e.Max == nil || e.DispatchDelay.Count != 30 || e.Runtime.SchedLatency.Count == 0 {
		t.Fatalf("requests %d, bound %+v: want one with samples on both sides", rep.Requests, e)
	}
	if *e.P99 < *e.DispatchDelay.P99+*e.Runtime.SchedLatency.P99 || *e.Max < *e.P99 {
		t.Errorf("bound p99 %g max %g under its parts %+v %+v", *e.P99, *e.Max, e.DispatchDelay, e.Runtime)
	}
	if e.Limit != 0.1 || e.Objective != "ttft 1s of scenario s" {
		t.Errorf("limit %g from %q, want 0.1 from the TTFT objective", e.Limit, e.Objective)
	}
	if rep.ClientSaturated {
		t.Errorf("30 requests at 10/s saturated the client: %s", render.PageOf(rep).SaturationDetail)
	}
	t.Log(render.PageOf(rep).BoundText)
}

// A prober that cannot keep up is caught: on one P shared with CPU-bound
// goroutines, each runnable goroutine waits for the others' time slices
// (the runtime preempts after 10 ms), so the bound's p99 passes a tenth
// of the 100 ms TTFT objective. More load on the host only makes it worse.
func TestSaturatedClientIsDetected(t *testing.T) {
	c, _ := serialSim(t, 64)
	b := burstOf(config.ArrivalConstant, 20, 0)
	b.Requests = 20

	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var stop atomic.Bool
	var burned atomic.Int64 // keeps the work from being optimised away
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			x := 0
			for n := 0; !stop.Load(); n++ {
				x += busy(n)
			}
			burned.Add(int64(x))
		})
	}
	rep, err := Runner{Client: c}.Run(context.Background(), b, []workload.Scenario{burstScenario()})
	stop.Store(true)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if !rep.ClientSaturated || rep.ErrorBound == nil || rep.ErrorBound.P99 == nil {
		t.Fatalf("a starved client was not called saturated: %s; %s", render.PageOf(rep).SaturationDetail, render.PageOf(rep).BoundText)
	}
	t.Log(render.PageOf(rep).BoundText)
}

// busy burns CPU in a call the runtime can preempt even without
// asynchronous preemption.
//
//go:noinline
func busy(n int) int {
	x := n
	for i := range 1000 {
		x ^= i * n
	}
	return x
}

// The self-probe records its reads while it runs.
func TestSelfProbeRecords(t *testing.T) {
	w := startSelfProbe()
	deadline := time.Now().Add(100 * time.Millisecond)
	for time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // let it send a number of times
	}
	tail := w.stop()
	if tail.Count == 0 || tail.P99 == nil || tail.Max == nil || *tail.Max < *tail.P99 || *tail.P99 < 0 {
		t.Fatalf("self-probe read delay %+v after 100ms of sampling", tail)
	}
}
