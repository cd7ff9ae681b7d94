package burst

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/report/render"
)

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
	rep, err := Runner{Client: c}.Run(context.Background(), plan.BurstOf(b, s))
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
	rep, err := Runner{Client: c}.Run(context.Background(), plan.BurstOf(b, burstScenario()))
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
