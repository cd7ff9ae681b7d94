// Package plan compiles a loaded configuration into what llmprobe runs:
// every scenario with what its prompts are drawn from (a dataset's prompts,
// a golden set's lines), every burst with its scenario mix, the part of its
// trace it replays, its rates, planned requests and the memory it may hold,
// all read and fixed once; then the seeded arrival schedule and the sweep's
// next rate, drawn from the compiled burst; and the running plan, which a
// reload replaces. Loading a file decodes, validates and compiles it, every
// problem of all three with its file and line.
package plan

import (
	"encoding/binary"
	"iter"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/shard"
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

// Burst is a configured burst compiled: its scenario mix, the part of its
// trace it replays, the rates it runs at, and what one run may hold.
type Burst struct {
	config.Burst
	// Mix is its scenarios, in the order of its configured mix.
	Mix []*Scenario
	// Trace is what the compile found in the part of a trace burst's file
	// the burst replays; nil for other processes.
	Trace     *TraceScan
	Footprint Footprint
	rates     []float64
}

// compileBurst compiles b of p, whose trace scan (if any) is trace.
func compileBurst(p *Plan, b config.Burst, trace *TraceScan) *Burst {
	pb := &Burst{Burst: b, Trace: trace}
	for _, ws := range b.Scenarios {
		if s, ok := p.Scenario(ws.Scenario); ok {
			pb.Mix = append(pb.Mix, s)
		}
	}
	pb.rates = pb.planRates()
	pb.Footprint = pb.footprint(p)
	return pb
}

// ScenarioConfigs is the mix's scenarios as configured, in its order.
func (b *Burst) ScenarioConfigs() []config.Scenario { return configScenarios(b.Mix) }

// Rates lists the rates one run sends at: its own, or its sweep's listed
// or linear steps, lowest first (auto may bisect between them: Stepper).
func (b *Burst) Rates() []float64 { return slices.Clone(b.rates) }

// Arrivals yields the burst's arrival schedule at rate, one arrival at a
// time and never the whole of it at once, from its seed: warmup first, then
// the measured part. The same seed gives the same schedule. It stops at the
// Requests bound, so the count the configuration was checked against holds
// whatever the random gaps do.
func (b *Burst) Arrivals(rate float64) iter.Seq[Arrival] {
	return b.Share(rate, shard.Shard{}, nil)
}

// Share is shard s's share of Arrivals(rate): the arrivals s.Takes, by
// their index in the whole plan, warmup included. Every shard draws the
// whole seeded plan and keeps its share, so the shards' union is exactly
// the single-process plan, offsets and scenarios alike. The target sees
// the union, which is the configured arrival process whatever the split; a
// shard's own gaps are only smoother than the union's (for Poisson, sums of
// N gaps), which is easier on its client. A trace replay tells what it
// read besides its records to replay, if not nil.
func (b *Burst) Share(rate float64, s shard.Shard, replay Replay) iter.Seq[Arrival] {
	whole := b.arrivals(rate, replay)
	if s.Count <= 1 {
		return whole
	}
	return func(yield func(Arrival) bool) {
		for a := range whole {
			if s.Takes(a.Index) && !yield(a) {
				return
			}
		}
	}
}

// Planned is how many requests shard s's share of a run at rate plans,
// a conversation's every turn counted: exact, but for a trace, whose file
// is not read again for it (its mean).
func (b *Burst) Planned(rate float64, s shard.Shard) int {
	if b.Arrival.Process == config.ArrivalTrace {
		return int(float64(b.meanArrivals(rate)/max(1, s.Count)) * b.meanTurns())
	}
	n := 0
	for a := range b.Share(rate, s, nil) {
		n += b.Mix[a.Scenario].TurnsOf()
	}
	return n
}

// PlannedMeasured is how many measured requests (warmup left out) a whole
// run at rate plans, as its report counts them; a trace's are read by the
// run.
func (b *Burst) PlannedMeasured(rate float64) int {
	n := 0
	for a := range b.Arrivals(rate) {
		if !a.Warmup {
			n += b.Mix[a.Scenario].TurnsOf()
		}
	}
	return n
}

func (b *Burst) arrivals(rate float64, replay Replay) iter.Seq[Arrival] {
	if b.Arrival.Process == config.ArrivalTrace {
		return b.tracePlan(replay)
	}
	return func(yield func(Arrival) bool) {
		rng := rand.New(rand.NewPCG(b.Seed, 0xa11))
		gap := interArrival(b.Arrival, rate, rng)
		pick := picker(b.Burst, rng)
		maxWarmup, maxMeasured := b.Requests(rate)
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
		for n := 0; n < maxMeasured && (n < b.Burst.Requests || t < measuredStart+b.Duration.Std()); n++ {
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
