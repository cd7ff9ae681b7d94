package report_test

import (
	"math"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/internal/reporttest"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/prompt"
	"github.com/llmprobe/llmprobe/report"
)

// run is a step of n requests at rate, bad of them past the 100 ms TTFT
// objective.
func run(rate float64, n, bad int, start time.Time) report.Run {
	_, scenarios := reporttest.Burst()
	results := reporttest.Results(scenarios[0], start, n, 0)
	for i, res := range results { // arriving at the step's rate
		res.Sched = start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
	}
	for _, res := range results[:bad] {
		res.TTFT, res.Checks = 200*time.Millisecond, nil
		prober.Evaluate(res, scenarios[0], prompt.Prompt{})
	}
	return report.Run{Rate: rate, Start: start, End: start.Add(time.Duration(float64(n) / rate * float64(time.Second))), Planned: n, Results: results}
}

// A step passes on its goodput's lower bound, not its ratio, and fails on
// its upper bound; the knee is the lowest failing rate and the highest
// passing one below it, steps with not enough evidence bounding nothing;
// the fleet is sized from the two, and a price per GPU without GPUs is n/a
// with the reason.
func TestSweepJudgesStepsByTheGoodputBound(t *testing.T) {
	b, scenarios := reporttest.Burst()
	b.Capacity = &config.Capacity{TargetRate: 50, Headroom: 0.2}
	b.Cost = &config.Cost{PerGPUHour: 2}
	sw := report.NewSweep(b, report.Meta{Scenarios: scenarios})
	start := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	if v := sw.Add(run(5, 20, 0, start), false); v != decide.NotEnough {
		t.Errorf("20 of 20 good (lower bound 0.84) is %s against a target of 0.9, not %s", v, decide.NotEnough)
	}
	if v := sw.Add(run(6, 40, 0, start.Add(time.Minute)), false); v != decide.Passed {
		t.Errorf("40 of 40 good (lower bound 0.91) is %s against a target of 0.9", v)
	}
	if v := sw.Add(run(10, 40, 20, start.Add(2*time.Minute)), false); v != decide.Failed {
		t.Errorf("20 of 40 good is %s against a target of 0.9", v)
	}
	if v := sw.Add(run(8, 40, 4, start.Add(3*time.Minute)), true); v != decide.NotEnough {
		t.Errorf("36 of 40 good, a ratio of 0.9 with a lower bound of 0.77, is %s against a target of 0.9", v)
	}
	rep := sw.Report()
	k := rep.Knee
	// 8/s had not enough evidence: it bounds nothing, the knee lies in [6, 10).
	if rep.MaxRateUnderSLO == nil || *rep.MaxRateUnderSLO != 6 || k == nil || k.Passing == nil || *k.Passing != 6 || k.Failing == nil || *k.Failing != 10 || k.TargetRatio != 0.9 {
		t.Fatalf("max rate %v, knee %+v", rep.MaxRateUnderSLO, k)
	}
	if k.Objectives["ttft"] != 0.1 {
		t.Errorf("objectives %v, want the 100 ms TTFT", k.Objectives)
	}
	last := rep.Sweep[3]
	if !last.Bisect || last.Good != 36 || last.Judged != 40 || *last.GoodputRatio != 0.9 || *last.GoodputLower > 0.8 || last.Latency["ttft"].Count != 40 {
		t.Errorf("the bisecting step %+v", last)
	}
	if p := k.Capacity; p == nil || p.Instances != 10 || p.FewestInstances != 6 || p.AtMost || p.GPUs != nil {
		t.Errorf("capacity %+v: want 6 to 10 instances for 60/s at 6/s (6 at 10/s, which failed), GPUs unknown", p)
	}
	if k.Cost != nil || k.Why == "" || rep.Sweep[0].Cost != nil {
		t.Errorf("a price per GPU without GPUs: %+v, why %q", k.Cost, k.Why)
	}
	// NVML's count prices it once the run's GPU facts are in.
	rep.GPU = &report.GPUFacts{Count: 2}
	report.SizeSweep(b, rep)
	if k := rep.Knee; k.Cost == nil || k.Cost.InstanceHourly != 4 || k.Capacity.GPUs == nil || *k.Capacity.GPUs != 20 || k.Why != "" {
		t.Errorf("with 2 GPUs: capacity %+v, cost %+v, why %q", k.Capacity, k.Cost, k.Why)
	}
	// The fleet: 10 instances at 4 an hour for 50/s of 5 output tokens.
	if f := rep.Knee.Fleet; f == nil || f.Instances != 10 || f.Hourly != 40 || f.PerMillionOutput == nil || math.Abs(*f.PerMillionOutput-40/(3600*250.0)*1e6) > 1e-6 {
		t.Errorf("fleet %+v", f)
	}
}
