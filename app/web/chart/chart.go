// Package chart lays out llmprobe's charts as SVG geometry (a burst
// report's percentiles per metric, TTFT over time, a sweep's curves, the
// landing page's sparklines): axes with ticks and units, bars, points and
// a legend, which the pages' templates draw.
package chart

import (
	"fmt"
	"math"
	"strconv"

	"github.com/llmprobe/llmprobe/lib/figure"
	"github.com/llmprobe/llmprobe/report"
)

// Chart geometry is computed here; app/web/templates/charts.html draws
// it as inline SVG: axes with tick labels and units, a legend for every series.
const (
	chartWidth, chartHeight = 560, 280
	// The plot area's margins: room for tick labels, axis titles and the legend.
	marginLeft, marginRight, marginTop, marginBottom = 64, 16, 48, 48
)

var chartColors = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2"}

// Chart is one SVG chart: a plot area, two axes, bars or points, a legend.
type Chart struct {
	Class, Label, Title      string
	Width, Height            int
	Left, Right, Top, Bottom float64 // the plot area
	XTitle, YTitle           string
	XTicks, YTicks           []tick
	Categories               []tick // category names under bar groups
	Notes                    []tick // a second line under a category: "too few"
	Bars                     []bar
	Series                   []series
	Legend                   []legendEntry
}

// tick is one tick of an axis: where, and its label.
type tick struct {
	Pos  float64
	Text string
}

// bar is one bar, with its hover text and the value written above it;
// Faint draws a figure that rests on too few samples.
type bar struct {
	X, Y, W, H         float64
	Fill, Title, Label string
	Faint              bool
}

// series is one set of points, in one color, joined or not.
type series struct {
	Color  string
	Line   bool // join the points
	Points []point
}

// point is one point, with its hover text.
type point struct {
	X, Y  float64
	Title string
}

// legendEntry is one color and what it stands for.
type legendEntry struct {
	X, Y         float64
	Color, Label string
}

func newChart(class, label, title, xTitle, yTitle string) *Chart {
	return &Chart{
		Class: class, Label: label, Title: title, Width: chartWidth, Height: chartHeight,
		Left: marginLeft, Right: chartWidth - marginRight, Top: marginTop, Bottom: chartHeight - marginBottom,
		XTitle: xTitle, YTitle: yTitle,
	}
}

// resize gives c another size, keeping its margins.
func (c *Chart) resize(width, height int) {
	c.Width, c.Height = width, height
	c.Right, c.Bottom = float64(width)-marginRight, float64(height)-marginBottom
}

// niceTicks returns ticks from 0 to at least hi in steps of 1, 2 or 5 times
// a power of ten, and the axis' top (the last tick).
func niceTicks(hi float64, want int) (ticks []float64, top float64) {
	if !(hi > 0) {
		hi = 1
	}
	raw := hi / float64(want)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	for i := 0; ; i++ {
		v := float64(i) * step
		ticks = append(ticks, v)
		if v >= hi*(1-1e-9) {
			return ticks, v
		}
	}
}

// tickText formats a tick value without trailing noise (0.30000000000000004).
func tickText(v float64) string {
	return strconv.FormatFloat(math.Round(v*1e6)/1e6, 'g', 6, 64)
}

// yAxis sets the y ticks for values up to hi and returns the mapping to pixels.
func (c *Chart) yAxis(hi float64) func(float64) float64 {
	ticks, top := niceTicks(hi, 5)
	y := func(v float64) float64 { return c.Bottom - v/top*(c.Bottom-c.Top) }
	for _, v := range ticks {
		c.YTicks = append(c.YTicks, tick{Pos: y(v), Text: tickText(v)})
	}
	return y
}

// xAxis sets the x ticks for values up to hi and returns the mapping to pixels.
func (c *Chart) xAxis(hi float64) func(float64) float64 {
	ticks, top := niceTicks(hi, 6)
	x := func(v float64) float64 { return c.Left + v/top*(c.Right-c.Left) }
	for _, v := range ticks {
		c.XTicks = append(c.XTicks, tick{Pos: x(v), Text: tickText(v)})
	}
	return x
}

// legend lays the entries out in a row above the plot area.
func (c *Chart) legend(colors, labels []string) {
	x := c.Left
	for i, l := range labels {
		c.Legend = append(c.Legend, legendEntry{X: x, Y: 24, Color: colors[i], Label: l})
		x += 24 + 6.5*float64(len(l))
	}
}

// TTFT plots each measured request's TTFT (ms) against when it was due
// (seconds after the measured part began); nil without samples.
func TTFT(r *report.Report) *Chart {
	if len(r.TTFTSeries) == 0 {
		return nil
	}
	maxX, maxY := 0.0, 0.0
	for _, p := range r.TTFTSeries {
		maxX, maxY = max(maxX, p[0]), max(maxY, 1000*p[1])
	}
	c := newChart("chart ttft-over-time", "TTFT over the burst", "TTFT over the burst", "time since the measured part began (s)", "TTFT (ms)")
	x, y := c.xAxis(maxX), c.yAxis(maxY)
	s := series{Color: chartColors[0]}
	for _, p := range r.TTFTSeries {
		s.Points = append(s.Points, point{X: x(p[0]), Y: y(1000 * p[1]), Title: fmt.Sprintf("+%.3f s: %s", p[0], figure.PageMs(p[1]))})
	}
	c.Series = []series{s}
	c.legend(chartColors[:1], []string{"TTFT of one successful request"})
	return c
}

// Sweep plots each step's achieved rate and TTFT p99 against the
// offered rate; nil for a burst that did not sweep.
func Sweep(r *report.Report) *Chart {
	if len(r.Sweep) == 0 {
		return nil
	}
	maxRate := 0.0
	for _, s := range r.Sweep {
		maxRate = max(maxRate, s.Rate)
		if s.AchievedRate != nil {
			maxRate = max(maxRate, *s.AchievedRate)
		}
	}
	c := newChart("chart sweep", "achieved rate per offered rate", "Sweep: achieved rate per offered rate", "offered rate (req/s)", "achieved rate (req/s)")
	x, y := c.xAxis(maxRate), c.yAxis(maxRate)
	passed := series{Color: chartColors[3]}
	failed := series{Color: chartColors[2]}
	line := series{Color: "#bbbbbb", Line: true}
	for _, s := range r.Sweep {
		if s.AchievedRate == nil {
			continue // nothing measured at this step: no point to draw
		}
		p := point{X: x(s.Rate), Y: y(*s.AchievedRate), Title: fmt.Sprintf("%.2f req/s offered: %.2f req/s achieved", s.Rate, *s.AchievedRate)}
		line.Points = append(line.Points, p)
		if s.Passed {
			passed.Points = append(passed.Points, p)
		} else {
			failed.Points = append(failed.Points, p)
		}
	}
	c.Series = []series{line, passed, failed}
	c.legend([]string{chartColors[3], chartColors[2]}, []string{"step held the SLO", "step missed the SLO"})
	return c
}
