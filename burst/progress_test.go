package burst

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/plan"
)

// Progress counts to the plan's size from the first request on: a Poisson
// burst of a duration sends another number than its mean, and the total
// must not move while it runs (29/105, then 106/112, then 113/113).
func TestProgressTotalIsThePlanFromTheStart(t *testing.T) {
	c, _ := serialSim(t, 64)
	b := burstOf(config.ArrivalPoisson, 40, 600*time.Millisecond)
	b.Warmup = config.Warmup{Requests: 3}
	var mu sync.Mutex
	var dones, totals []int
	r := Runner{Client: c, Progress: func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		dones, totals = append(dones, done), append(totals, total)
	}}
	rep, err := r.Run(context.Background(), plan.BurstOf(b, burstScenario()))
	if err != nil {
		t.Fatal(err)
	}
	want := rep.PlannedRequests + rep.WarmupRequests
	if len(totals) == 0 || dones[len(dones)-1] != want {
		t.Fatalf("progress %v of %v; want it to end at %d", dones, totals, want)
	}
	for i, total := range totals {
		if total != want || dones[i] != i+1 {
			t.Errorf("update %d: %d/%d, want %d/%d (totals %v)", i, dones[i], total, i+1, want, totals)
			break
		}
	}
}
