package burst

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/report/render"
)

// A sweep against a sim of known capacity (10/s) keeps every step's
// figures, bisects the knee to the resolution, and sizes and prices the
// fleet from it; its text and Markdown carry the curve.
func TestSweepDrawsTheCurveAndSizesTheFleet(t *testing.T) {
	c, _ := serialSim(t, 1)
	b := burstOf(config.ArrivalConstant, 1, 2*time.Second)
	b.Sweep = &config.Sweep{Auto: &config.AutoSweep{Start: 4, Step: 4, Max: 16, TargetRatio: 0.5, Resolution: 1}}
	b.Capacity = &config.Capacity{TargetRate: 100, Headroom: 0.2, GPUsPerInstance: 2}
	b.Cost = &config.Cost{PerGPUHour: 2.5}
	rep := runAt(t, c, b)

	k := rep.Knee
	if k == nil || k.Passing == nil || k.Failing == nil {
		t.Fatalf("knee %+v of steps %+v", k, rep.Sweep)
	}
	if *k.Passing < 6 || *k.Passing > 11 || *k.Failing-*k.Passing > 4+1e-9 || *k.Failing <= *k.Passing {
		t.Errorf("knee in [%g, %g), want about 10/s within a step", *k.Passing, *k.Failing)
	}
	// Bisected as far as the evidence goes: a step left inside the knee's
	// interval had not enough evidence, and so does a gap wider than 1/s.
	for _, s := range rep.Sweep {
		if s.Rate > *k.Passing && s.Rate < *k.Failing && s.Verdict != decide.NotEnough {
			t.Errorf("step %g/s inside the knee [%g, %g) is %s", s.Rate, *k.Passing, *k.Failing, s.Verdict)
		}
	}
	t.Logf("knee in [%g, %g) from %d steps", *k.Passing, *k.Failing, len(rep.Sweep))
	bisected := 0
	for _, s := range rep.Sweep {
		if s.Bisect {
			bisected++
		}
		for _, m := range []string{"ttft", "tpot", "itl", "e2e"} {
			if s.Latency[m].Count == 0 {
				t.Errorf("step %g/s kept no %s", s.Rate, m)
			}
		}
		if s.Judged == 0 || s.GoodputLower == nil || s.GoodputUpper == nil || *s.GoodputLower > *s.GoodputRatio || s.Throughput.OutputTokens == nil || s.Outcomes["success"] == 0 || s.Cost == nil || s.Cost.PerMillionOutput == nil {
			t.Errorf("step %g/s lacks its figures: %+v", s.Rate, s)
		}
		if s.Passed != (*s.GoodputLower >= 0.5) {
			t.Errorf("step %g/s passed=%v with a goodput lower bound of %.3f", s.Rate, s.Passed, *s.GoodputLower)
		}
	}
	if bisected == 0 {
		t.Errorf("no step bisected: %+v", rep.Sweep)
	}

	p := k.Capacity
	if p == nil || p.AtMost || p.Instances != int(math.Ceil(120 / *k.Passing - 1e-9)) || p.GPUs == nil || *p.GPUs != 2*p.Instances || p.OutputTokensPerGPU == nil {
		t.Fatalf("capacity %+v at %g/s", p, *k.Passing)
	}
	var at float64
	for _, s := range rep.Sweep {
		if s.Rate == *k.Passing {
			at = *s.Throughput.OutputTokens
		}
	}
	if k.Cost == nil || k.Cost.PerMillionOutput == nil || math.Abs(*k.Cost.PerMillionOutput-5/(3600*at)*1e6) > 1e-6 {
		t.Errorf("cost %+v, want $5/h over %.1f output tok/s", k.Cost, at)
	}

	var text, md strings.Builder
	render.Text(&text, rep)
	if err := render.Markdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"QPS–latency curve", "TTFT p50", "TPOT p99", "← knee", "(bisect)", "max rate under SLO: in [", "capacity: instances ", "per million output tokens"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text lacks %q:\n%s", want, text.String())
		}
	}
	if !strings.Contains(md.String(), "| offered | achieved | goodput (95% CI) | TTFT p50 |") || strings.Count(md.String(), "/s | ") < len(rep.Sweep) {
		t.Errorf("the Markdown lacks the curve table:\n%s", md.String())
	}
}
