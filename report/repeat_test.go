package report_test

import (
	"fmt"
	"testing"

	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/stats"
)

// runs makes one report per TPOT level, each of 40 requests around it.
func runs(tpot ...float64) []*report.Report {
	out := make([]*report.Report, len(tpot))
	for i, v := range tpot {
		xs := make([]float64, 40)
		for j := range xs {
			xs[j] = v * (0.9 + 0.2*float64(j)/39)
		}
		out[i] = &report.Report{ID: fmt.Sprintf("b-%d", i), Burst: "b", Requests: 40, AllOutputTokens: 100,
			Latency: map[string]stats.Summary{"tpot": stats.Summarize(xs)}}
	}
	return out
}

// Each figure's mean comes with its Student-t interval from 3 runs on,
// none from 2; the runs' tokens add up for energy per token.
func TestCombine(t *testing.T) {
	rep := report.CombineRuns(runs(0.010, 0.011, 0.012))
	f := rep.Repeat.Figure("tpot", "p50")
	if rep.ID != "b-2" || rep.Repeat.Runs != 3 || len(rep.Repeat.RunIDs) != 3 || rep.AllOutputTokens != 300 || f == nil || len(f.Values) != 3 {
		t.Fatalf("combined %+v, figure %+v", rep.Repeat, f)
	}
	if *f.Mean < 0.0109 || *f.Mean > 0.0111 || f.Interval == nil || *f.Interval.Lo >= *f.Mean || *f.Interval.Hi <= *f.Mean {
		t.Errorf("tpot p50 mean %g interval %+v, want 0.011 inside it", *f.Mean, f.Interval)
	}
	if g := rep.Repeat.Figure("goodput_ratio", ""); g == nil || g.Mean != nil {
		t.Errorf("goodput measured by no run: %+v, want no mean", g)
	}
	two := report.CombineRuns(runs(0.010, 0.011)).Repeat.Figure("tpot", "p50")
	if two.Mean == nil || two.Interval != nil {
		t.Errorf("2 runs: %+v, want a mean and no interval", two)
	}
	if one := report.CombineRuns(runs(0.010)); one.Repeat != nil {
		t.Errorf("one run has run-level figures: %+v", one.Repeat)
	}
}
