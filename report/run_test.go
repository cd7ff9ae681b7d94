package report

import (
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/prober"
)

// Whatever order results are added in (a burst's workers finish out of
// order; a merge adds shard by shard), Close puts them in the plan's order,
// a conversation's turns in turn order, and the span covers them all.
func TestRunCloseOrdersByPlanAndTurn(t *testing.T) {
	origin := time.Unix(1_700_000_000, 0)
	result := func(n, turn int) *prober.Result {
		return &prober.Result{Sched: origin.Add(time.Duration(n) * time.Second), Turn: turn, E2E: time.Second}
	}
	var run Run
	for _, a := range [][2]int{{3, 0}, {1, 2}, {2, 0}, {1, 1}, {0, 0}, {1, 3}} {
		run.Add(a[0], result(a[0], a[1]))
	}
	run.Close(origin.Add(-time.Hour))
	want := [][2]int{{0, 0}, {1, 1}, {1, 2}, {1, 3}, {2, 0}, {3, 0}}
	for i, w := range want {
		if run.Index[i] != w[0] || run.Results[i].Turn != w[1] {
			t.Errorf("result %d: arrival %d turn %d, want arrival %d turn %d", i, run.Index[i], run.Results[i].Turn, w[0], w[1])
		}
	}
	if !run.Start.Equal(origin) || !run.End.Equal(origin.Add(4*time.Second)) {
		t.Errorf("span %v – %v, want the first request's due time to the last one's end", run.Start, run.End)
	}
}
