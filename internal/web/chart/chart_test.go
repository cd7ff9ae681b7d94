package chart

import (
	"fmt"
	"math"
	"testing"

	"github.com/llmprobe/llmprobe/report"
)

// Axes step by 1, 2 or 5 times a power of ten and end at the first tick at
// or above the highest value; labels carry no floating-point noise.
func TestNiceTicks(t *testing.T) {
	for _, c := range []struct {
		hi    float64
		want  int
		ticks string
		top   float64
	}{
		{7.3, 5, "[0 2 4 6 8]", 8},
		{100, 5, "[0 20 40 60 80 100]", 100},
		{0, 5, "[0 0.2 0.4 0.6 0.8 1]", 1}, // nothing to draw: a unit axis
		{0.9, 6, "[0 0.2 0.4 0.6 0.8 1]", 1},
	} {
		ticks, top := niceTicks(c.hi, c.want)
		text := make([]string, len(ticks))
		for i, v := range ticks {
			text[i] = tickText(v)
		}
		if got := fmt.Sprint(text); got != c.ticks || math.Abs(top-c.top) > 1e-9 {
			t.Errorf("niceTicks(%g, %d) = %s up to %g, want %s up to %g", c.hi, c.want, got, top, c.ticks, c.top)
		}
	}
	if got := tickText(0.1 + 0.2); got != "0.3" {
		t.Errorf("tickText(0.1+0.2) = %q", got)
	}
}

// Every bar stands on the x axis inside the plot area, the highest p99 no
// higher than the axis' top; a report without samples has no chart.
func TestPercentilesInsidePlot(t *testing.T) {
	r := &report.Report{ID: "r", Latency: map[string]report.Summary{
		"ttft": {Count: 10, P50: 0.1, P90: 0.2, P99: 0.35},
		"tpot": {Count: 10, P50: 0.01, P90: 0.02, P99: 0.03},
	}}
	c := Percentiles(r)
	if c == nil || len(c.Bars) != 6 || len(c.Categories) != 2 || len(c.Legend) != 3 {
		t.Fatalf("chart %+v", c)
	}
	for _, b := range c.Bars {
		if b.Y < c.Top-1e-9 || math.Abs(b.Y+b.H-c.Bottom) > 1e-9 || b.X < c.Left || b.X+b.W > c.Right {
			t.Errorf("bar %+v outside the plot area %g..%g × %g..%g", b, c.Left, c.Right, c.Top, c.Bottom)
		}
	}
	if c.Bars[2].Title != "ttft p99 350.0 ms; p99 from 10 samples: too few, needs 368" || c.Bars[0].Title != "ttft p50 100.0 ms" {
		t.Errorf("bar titles %q, %q: want a p99 from 10 samples marked too few", c.Bars[2].Title, c.Bars[0].Title)
	}
	if Percentiles(&report.Report{ID: "empty"}) != nil || TTFT(&report.Report{}) != nil || Sweep(&report.Report{}) != nil {
		t.Error("a chart without samples")
	}
}
