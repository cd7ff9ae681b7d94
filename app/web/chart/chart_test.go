package chart

import (
	"fmt"
	"math"
	"testing"

	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/stats"
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

// One chart per metric with samples, each on its own axis: every bar
// stands on the x axis inside its plot, and a metric a hundred times
// smaller than another still fills its own plot; a p99 from too few
// samples is faint and says so; metrics without samples are named, not
// drawn; a report without samples has no chart.
func TestPercentilesPerMetric(t *testing.T) {
	r := &report.Report{ID: "r", Latency: map[string]stats.Summary{
		"ttft": {Count: 400, P50: 0.1, P90: 0.2, P99: 0.35},
		"tpot": {Count: 10, P50: 0.001, P90: 0.002, P99: 0.0035},
	}}
	charts, na := Percentiles(r)
	if len(charts) != 2 || fmt.Sprint(na) != "[itl e2e]" {
		t.Fatalf("%d charts, n/a %v; want ttft and tpot drawn, itl and e2e named", len(charts), na)
	}
	for _, c := range charts {
		if len(c.Bars) != 3 || len(c.Categories) != 3 {
			t.Fatalf("chart %s: %d bars, %d categories; want p50, p90, p99", c.Title, len(c.Bars), len(c.Categories))
		}
		for _, b := range c.Bars {
			if b.Y < c.Top-1e-9 || math.Abs(b.Y+b.H-c.Bottom) > 1e-9 || b.X < c.Left || b.X+b.W > c.Right {
				t.Errorf("%s: bar %+v outside the plot area %g..%g × %g..%g", c.Title, b, c.Left, c.Right, c.Top, c.Bottom)
			}
		}
		if p99 := c.Bars[2]; p99.H < (c.Bottom-c.Top)/2 {
			t.Errorf("%s: the p99 bar is %.1f of %.1f pixels: not on the metric's own scale", c.Title, p99.H, c.Bottom-c.Top)
		}
	}
	ttft, tpot := charts[0], charts[1]
	if ttft.Title != "ttft (400 samples)" || ttft.Bars[2].Faint || len(ttft.Notes) != 0 || ttft.Bars[2].Label != "350" {
		t.Errorf("ttft: %q, p99 faint %v, notes %v, label %q; want a p99 of 400 samples drawn plain, labelled 350", ttft.Title, ttft.Bars[2].Faint, ttft.Notes, ttft.Bars[2].Label)
	}
	if p99 := tpot.Bars[2]; !p99.Faint || p99.Title != "tpot p99 3.5 ms; p99 from 10 samples: too few, needs 368" || p99.Label != "3.5" ||
		len(tpot.Notes) != 2 || tpot.Notes[1].Text != "too few" || tpot.Notes[1].Pos != tpot.Categories[2].Pos {
		t.Errorf("tpot's p99: faint %v, %q, label %q, notes %+v; want it (and p90, from 10 of 36) faint, marked too few under it", p99.Faint, p99.Title, p99.Label, tpot.Notes)
	}
	if tpot.Bars[0].Faint || tpot.Bars[0].Title != "tpot p50 1.0 ms" {
		t.Errorf("tpot's p50 %+v: 10 samples are enough for a p50", tpot.Bars[0])
	}
	if charts, _ := Percentiles(&report.Report{ID: "empty"}); charts != nil || TTFT(&report.Report{}) != nil || Sweep(&report.Report{}) != nil {
		t.Error("a chart without samples")
	}
}
