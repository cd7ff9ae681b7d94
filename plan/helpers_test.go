package plan

import (
	"iter"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/shard"
)

// The tests make bursts in code; these compile one as the runner takes it
// and ask it what its methods say.

func arrivalsOf(b config.Burst, rate float64) iter.Seq[Arrival] {
	return BurstOf(b).Arrivals(rate)
}

func shareOf(b config.Burst, rate float64, s shard.Shard, r Replay) iter.Seq[Arrival] {
	return BurstOf(b).Share(rate, s, r)
}

func requestsOf(b config.Burst, rate float64) (warmup, measured int) {
	return BurstOf(b).Requests(rate)
}

func stepperOf(b config.Burst) *Stepper { return BurstOf(b).Stepper() }
