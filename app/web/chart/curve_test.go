package chart

import (
	"testing"

	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/stats"
)

// A burst that did not sweep, or a sweep without samples of a metric,
// draws no curve; a knee and an objective add their lines to the legend.
func TestCurveNeedsSamples(t *testing.T) {
	if Curve(&report.Report{}, "ttft") != nil || Frontier(&report.Report{}) != nil {
		t.Error("a curve without a sweep")
	}
	f := func(v float64) *float64 { return &v }
	r := &report.Report{Sweep: []report.SweepStep{{Rate: 2, Latency: map[string]stats.Summary{"ttft": {Count: 5, P50: 0.01, P99: 0.02}}}}}
	if Curve(r, "tpot") != nil {
		t.Error("a TPOT curve without TPOT samples")
	}
	r.Knee = &report.Knee{Passing: f(2), Objectives: map[string]float64{"ttft": 0.05}}
	c := Curve(r, "ttft")
	if c == nil || len(c.Legend) != 4 || c.Legend[2].Label != "SLO 50 ms" || c.Legend[3].Label != "knee 2 req/s" {
		t.Fatalf("curve legend %+v", c)
	}
	// The SLO line spans the plot at 50 ms: above both points, below the top.
	slo := c.Series[len(c.Series)-2]
	if len(slo.Points) != 2 || slo.Points[0].Y != slo.Points[1].Y || slo.Points[0].X != c.Left || slo.Points[1].X != c.Right || slo.Points[0].Y < c.Top {
		t.Errorf("SLO line %+v in a plot from %g to %g", slo.Points, c.Top, c.Bottom)
	}
}
