package render

import (
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/stats"
)

// The knee reads as an interval, a lower bound when no step failed, or an
// upper one when none held; capacity then says "at most".
func TestKneeTextSaysWhatTheStepsBound(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		knee report.Knee
		want string
	}{
		{report.Knee{TargetRatio: 0.9, Passing: f(10), Failing: f(10.5), Resolution: 0.5}, "max rate under SLO: in [10, 10.5)/s, bisected to 0.5/s (a step holds when the lower bound of its goodput's 95% interval reaches 90%, fails when the upper bound stays below)"},
		{report.Knee{TargetRatio: 0.9, Passing: f(16)}, "max rate under SLO: at least 16/s, no step failed"},
		{report.Knee{TargetRatio: 0.99, Failing: f(4)}, "max rate under SLO: below 4/s, no step held the SLO"},
	} {
		r := &report.Report{Sweep: []report.SweepStep{{Rate: 4}}, Knee: &c.knee}
		if got := kneeText(r); !strings.HasPrefix(got, c.want) {
			t.Errorf("knee %+v says %q, want %q", c.knee, got, c.want)
		}
	}
	// Steps with not enough evidence inside the interval are named.
	unclear := &report.Report{Sweep: []report.SweepStep{{Rate: 4}, {Rate: 8}, {Rate: 12}, {Rate: 10}, {Rate: 9}}, Knee: &report.Knee{TargetRatio: 0.9, Passing: f(8), Failing: f(12), Resolution: 1}}
	if got, want := kneeText(unclear), "max rate under SLO: in [8, 12)/s; 9/s, 10/s had not enough evidence either way, and longer steps would narrow it (a step holds"; !strings.HasPrefix(got, want) {
		t.Errorf("knee says %q, want %q", got, want)
	}
	open := report.SizeFleet(config.Capacity{TargetRate: 100}, 16, 0, true, nil, 1)
	r := &report.Report{Sweep: []report.SweepStep{{Rate: 16, Passed: true}}, Knee: &report.Knee{Passing: f(16), Capacity: &open}}
	checks := planChecks(r)
	if len(checks) != 2 || checks[1].Name != "capacity" || !strings.Contains(checks[1].Detail, "instances at most 7, GPUs at most 7") {
		t.Errorf("checks %+v", checks)
	}
	none := &report.Report{Sweep: []report.SweepStep{{Rate: 4}}, Knee: &report.Knee{Failing: f(4), Why: "no step held the SLO: nothing to size or price"}}
	if checks := planChecks(none); len(checks) != 2 || checks[0].Status != StatusSkipped || checks[1].Status != StatusSkipped {
		t.Errorf("checks of a sweep that held nothing: %+v", checks)
	}
}

// A step's percentile from too few samples is starred in the curve's text
// and Markdown tables, with the note under them; enough samples, no star.
func TestCurveStarsTooFewPercentiles(t *testing.T) {
	sum := func(n int) stats.Summary { return stats.Summary{Count: n, P50: 0.01, P99: 0.02, Max: 0.03} }
	step := func(rate float64, n int) report.SweepStep {
		return report.SweepStep{Rate: rate, Latency: map[string]stats.Summary{"ttft": sum(n), "tpot": sum(n), "itl": sum(n), "e2e": sum(n)}}
	}
	r := &report.Report{Sweep: []report.SweepStep{step(4, 400), step(8, 60)}}
	var text strings.Builder
	writeSweep(&text, r)
	var md strings.Builder
	markdownSweep(&md, r)
	// Markdown escapes the star, which would start emphasis.
	for name, out := range map[string]string{"text": text.String(), "markdown": strings.ReplaceAll(md.String(), `\*`, "*")} {
		if got := strings.Count(out, "20.0ms*"); got != 4 {
			t.Errorf("%s: %d starred p99 cells, want 4 (the 60-sample step's):\n%s", name, got, out)
		}
		if strings.Contains(out, "10.0ms*") {
			t.Errorf("%s: a p50 from 60 samples is starred:\n%s", name, out)
		}
		if !strings.Contains(out, "p99 needs 368") || strings.Contains(out, "p50 needs") {
			t.Errorf("%s: the note does not say p99 needs 368 (only):\n%s", name, out)
		}
	}
	if f := curveFootnote(&report.Report{Sweep: []report.SweepStep{step(4, 400)}}); f != "" {
		t.Errorf("a note without stars: %q", f)
	}
}
