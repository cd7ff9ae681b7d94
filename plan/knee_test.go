package plan_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/sim"
	"github.com/llmprobe/llmprobe/stats"
)

// The documented sweep (docs/decisions.md: auto from 4/s by 4 to 24/s,
// resolution 1/s, a 90 % target on TTFT 300 ms and TPOT 100 ms) against
// its sim, each step run on the sim's own engine loop on a virtual clock
// (sim.LongRun) and judged as a burst's step is (batch means, Wilson,
// decide.StepVerdict), the rates chosen by plan.Stepper, the knee by
// decide.Knee. With steps of 600 requests, at least 18 of 20 seeds give a
// knee interval that holds the engine's long-run knee (the rate whose goodput
// over five simulated hours is 90 %); with the 60 the example used to plan,
// far fewer do.
func TestKneeIntervalHoldsTheLongRunKnee(t *testing.T) {
	engine := sim.DefaultConfig()
	engine.MaxBatch, engine.DecodeBase, engine.DecodePerSeq = 4, 5*time.Millisecond, time.Millisecond
	load := sim.Workload{PromptTokens: 64, OutputTokens: 32, TTFT: 300 * time.Millisecond, TPOT: 100 * time.Millisecond, Duration: 5 * time.Hour, Seed: 1}
	truth, err := sim.LongRunKnee(engine, load, 0.9, 1, 24, 0.02)
	if err != nil {
		t.Fatal(err)
	}
	b := config.DefaultBurst
	b.Name, b.Target = "curve", "sim"
	b.Scenarios = []config.WeightedScenario{{Scenario: testkit.Scenario().Name, Weight: 1}}
	b.Arrival = config.Arrival{Process: config.ArrivalPoisson, Rate: 4, Burstiness: 1}
	b.Sweep = &config.Sweep{Auto: &config.AutoSweep{Start: 4, Step: 4, Max: 24, Resolution: 1, TargetRatio: 0.9}}
	for _, c := range []struct {
		requests, atLeast int
	}{{600, 18}, {60, 0}} {
		held := 0
		var lines []string
		for seed := uint64(1); seed <= 20; seed++ {
			stepper := plan.BurstOf(b, testkit.Scenario()).Stepper()
			var steps []decide.Step
			for rate, _, ok := stepper.Next(); ok; rate, _, ok = stepper.Next() {
				w := load
				w.Rate, w.Seed = rate, seed*1000+uint64(len(steps))
				w.Duration = time.Duration(float64(c.requests) / rate * float64(time.Second))
				r, err := sim.LongRun(engine, w)
				if err != nil {
					t.Fatal(err)
				}
				lo, hi, _ := stats.WilsonAt(r.Good, r.Requests, stats.EffectiveN(r.InOrder))
				v := decide.StepVerdict(false, &lo, &hi, 0.9)
				stepper.Record(v == decide.Passed, v == decide.Failed)
				steps = append(steps, decide.Step{Rate: rate, Verdict: v})
			}
			passing, failing := decide.Knee(steps)
			ok := passing != nil && *passing <= truth && (failing == nil || truth < *failing)
			if ok {
				held++
			}
			lines = append(lines, fmt.Sprintf("seed %d: [%s, %s) %v", seed, rate(passing), rate(failing), ok))
		}
		t.Logf("%d requests a step: %d of 20 knee intervals hold the long-run knee %.2f/s: %v", c.requests, held, truth, lines)
		if held < c.atLeast {
			t.Errorf("%d requests a step: %d of 20 knee intervals hold the long-run knee %.2f/s, fewer than %d", c.requests, held, truth, c.atLeast)
		}
	}
}

func rate(r *float64) string {
	if r == nil {
		return "none"
	}
	return fmt.Sprintf("%g", *r)
}
