package burst

import (
	"encoding/binary"
	"iter"
	"math"
	"math/rand/v2"
	"time"

	"github.com/llmprobe/llmprobe/config"
)

// Arrival is one planned request of a burst.
type Arrival struct {
	At       time.Duration // offset from the burst's start
	Scenario int           // index into the burst's scenario mix
	Warmup   bool
	// Index is the arrival's place in the whole plan, warmup included: its
	// prompt's nonce, the same in a shard as in a single-process run.
	Index int
	// Input and Output are a trace's lengths; 0 means the scenario's
	// distributions.
	Input, Output int32
	// Blocks packs a Mooncake record's leading hash ids, 8 bytes each (a
	// string keeps an Arrival comparable and cheap to copy); "" is none.
	// Arrivals whose leading ids agree share those 512-token blocks.
	Blocks string
}

// packBlocks packs hash ids for Arrival.Blocks.
func packBlocks(ids []int64) string {
	b := make([]byte, 0, 8*len(ids))
	for _, id := range ids {
		b = binary.LittleEndian.AppendUint64(b, uint64(id))
	}
	return string(b)
}

// BlockIDs unpacks the arrival's hash ids.
func (a Arrival) BlockIDs() []uint64 {
	ids := make([]uint64, len(a.Blocks)/8)
	for i := range ids {
		ids[i] = binary.LittleEndian.Uint64([]byte(a.Blocks[8*i : 8*i+8]))
	}
	return ids
}

// Plan yields a burst's arrival schedule at rate, one arrival at a time and
// never the whole of it at once, from its seed: warmup first, then the
// measured part. The same seed gives the same schedule. It stops at
// config's PlannedRequests bound, so the count the configuration was
// checked against holds whatever the random gaps do.
func Plan(b config.Burst, rate float64) iter.Seq[Arrival] {
	return plan(b, rate, nil)
}

// plan is Plan; a trace replay counts what it skipped in stats, if not nil.
func plan(b config.Burst, rate float64, stats *traceStats) iter.Seq[Arrival] {
	if b.Arrival.Process == config.ArrivalTrace {
		return tracePlan(b, stats)
	}
	return func(yield func(Arrival) bool) {
		rng := rand.New(rand.NewPCG(b.Seed, 0xa11))
		gap := interArrival(b.Arrival, rate, rng)
		pick := picker(b, rng)
		maxWarmup, maxMeasured := b.PlannedRequests(rate)
		var t time.Duration
		index := 0
		emit := func(warmup bool) bool {
			a := Arrival{At: t, Scenario: pick(), Warmup: warmup, Index: index}
			t += gap()
			index++
			return yield(a)
		}
		for n := 0; n < maxWarmup && (n < b.Warmup.Requests || t < b.Warmup.Duration.Std()); n++ {
			if !emit(true) {
				return
			}
		}
		measuredStart := t
		for n := 0; n < maxMeasured && (n < b.Requests || t < measuredStart+b.Duration.Std()); n++ {
			if !emit(false) {
				return
			}
		}
	}
}

// picker draws a scenario index by the mix's weights.
func picker(b config.Burst, rng *rand.Rand) func() int {
	weights := make([]float64, len(b.Scenarios))
	total := 0.0
	for i, s := range b.Scenarios {
		total += s.Weight
		weights[i] = total
	}
	return func() int {
		x := rng.Float64() * total
		for i, w := range weights {
			if x < w {
				return i
			}
		}
		return len(weights) - 1
	}
}

// interArrival returns a generator of gaps with mean 1/rate: constant,
// exponential (Poisson), or gamma with shape = burstiness, whose coefficient
// of variation is 1/sqrt(burstiness).
func interArrival(a config.Arrival, rate float64, rng *rand.Rand) func() time.Duration {
	mean := 1 / rate
	seconds := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	switch a.Process {
	case config.ArrivalConstant:
		return func() time.Duration { return seconds(mean) }
	case config.ArrivalGamma:
		k := a.Burstiness
		return func() time.Duration { return seconds(gammaSample(rng, k) * mean / k) }
	default:
		return func() time.Duration { return seconds(rng.ExpFloat64() * mean) }
	}
}

// gammaSample draws Gamma(k, 1) by Marsaglia and Tsang; k < 1 is boosted
// from k+1.
func gammaSample(rng *rand.Rand, k float64) float64 {
	if k < 1 {
		return gammaSample(rng, k+1) * math.Pow(rng.Float64(), 1/k)
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}
