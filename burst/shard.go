package burst

import (
	"iter"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/shard"
)

// ShardPlan is shard s's share of Plan(b, rate): arrival n of the whole
// plan, warmup included, when n % s.Count == s.Index. Every shard draws the
// whole seeded plan and keeps its share, so the shards' union is exactly the
// single-process plan, offsets and scenarios alike.
//
// Round robin by arrival index rather than a hash of it: every shard gets
// the same count to within one and an exact rate/N share, so shards finish
// together and each one's client load is known in advance. The target sees
// the union, which is the configured arrival process whatever the split; a
// shard's own gaps are only smoother than the union's (for Poisson, sums of
// N gaps), which is easier on its client. A zero Shard, or one of one, is the
// whole plan.
func ShardPlan(b config.Burst, rate float64, s shard.Shard) iter.Seq[Arrival] {
	return shardPlan(b, rate, s, nil)
}

func shardPlan(b config.Burst, rate float64, s shard.Shard, stats *traceStats) iter.Seq[Arrival] {
	if s.Count <= 1 {
		return plan(b, rate, stats)
	}
	return func(yield func(Arrival) bool) {
		for a := range plan(b, rate, stats) {
			if s.Takes(a.Index) && !yield(a) {
				return
			}
		}
	}
}
