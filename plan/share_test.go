package plan

import (
	"cmp"
	"slices"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/shard"
)

// The shards of a split burst make up exactly the single-process plan:
// every arrival once, at the same offset, with the same scenario, warmup
// thinned like the rest; each shard gets its share to within one.
func TestShardPlansMakeUpThePlan(t *testing.T) {
	for _, tc := range []struct {
		process    string
		burstiness float64
		shards     int
	}{
		{config.ArrivalPoisson, 1, 3},
		{config.ArrivalConstant, 1, 2},
		{config.ArrivalGamma, 0.25, 5},
		{config.ArrivalPoisson, 1, 1},
	} {
		b := testBurst(tc.process, 40, tc.burstiness)
		b.Requests, b.Duration = 0, config.Duration(20*time.Second)
		b.Warmup = config.Warmup{Duration: config.Duration(2 * time.Second)}
		b.Scenarios = []config.WeightedScenario{{Scenario: "a", Weight: 3}, {Scenario: "b", Weight: 1}}
		whole := slices.Collect(arrivalsOf(b, 40))
		var union []Arrival
		for i := range tc.shards {
			share := slices.Collect(shareOf(b, 40, shard.Shard{Index: i, Count: tc.shards}, nil))
			if n := len(whole) / tc.shards; len(share) < n || len(share) > n+1 {
				t.Errorf("%s, shard %d/%d: %d of %d arrivals", tc.process, i, tc.shards, len(share), len(whole))
			}
			for _, a := range share {
				if a.Index%tc.shards != i {
					t.Fatalf("%s: shard %d/%d has arrival %d", tc.process, i, tc.shards, a.Index)
				}
			}
			union = append(union, share...)
		}
		slices.SortFunc(union, func(x, y Arrival) int { return cmp.Compare(x.Index, y.Index) })
		if !slices.Equal(union, whole) {
			t.Errorf("%s over %d shards: the union is not the plan", tc.process, tc.shards)
		}
		for i, a := range whole {
			if a.Index != i {
				t.Fatalf("arrival %d has index %d", i, a.Index)
			}
		}
		if !slices.ContainsFunc(whole, func(a Arrival) bool { return a.Warmup }) {
			t.Error("the plan has no warmup")
		}
	}
	// The zero shard is the whole plan.
	b := testBurst(config.ArrivalPoisson, 40, 1)
	if !slices.Equal(slices.Collect(shareOf(b, 40, shard.Shard{}, nil)), slices.Collect(arrivalsOf(b, 40))) {
		t.Error("the zero shard is not the plan")
	}
}
