package web

import (
	"fmt"

	"github.com/llmprobe/llmprobe/report"
)

// Chart geometry is computed here; templates/bursts.html draws it as SVG.
const chartWidth, chartHeight, chartPad = 520, 220, 40

var chartColors = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2"}

type barChart struct {
	Width, Height int
	Title, Label  string
	Bars          []chartBar
	Groups        []chartText
	Legend        []chartLegend
}

type chartBar struct {
	X, Y, W, H  float64
	Fill, Title string
}

type chartText struct {
	X, Y float64
	Text string
}

type chartLegend struct {
	X, Y  int
	Fill  string
	Label string
}

type scatterChart struct {
	Width, Height, Pad, Right, Bottom int
	Title                             string
	Points                            []chartPoint
	Fill                              string
}

type chartPoint struct{ X, Y float64 }

// percentileChart draws p50/p90/p99 of each latency metric as grouped bars.
func percentileChart(r *report.Report) *barChart {
	metrics := []string{"ttft", "tpot", "itl", "e2e"}
	quantiles := []string{"p50", "p90", "p99"}
	maxV := 0.0
	for _, m := range metrics {
		maxV = max(maxV, r.Latency[m].P99)
	}
	if maxV == 0 {
		return nil
	}
	c := &barChart{
		Width: chartWidth, Height: chartHeight,
		Title: fmt.Sprintf("latency percentiles (s, max %.3g)", maxV),
		Label: "latency percentiles of " + r.ID,
	}
	group := float64(chartWidth-2*chartPad) / float64(len(metrics))
	bar := group / float64(len(quantiles)+1)
	for i, m := range metrics {
		for j, q := range quantiles {
			v := r.Latency[m].Quantile(q)
			h := v / maxV * float64(chartHeight-2*chartPad)
			c.Bars = append(c.Bars, chartBar{
				X: float64(chartPad) + float64(i)*group + float64(j)*bar, Y: float64(chartHeight-chartPad) - h, W: bar - 2, H: h,
				Fill: chartColors[j], Title: fmt.Sprintf("%s %s %.4gs", m, q, v),
			})
		}
		c.Groups = append(c.Groups, chartText{X: float64(chartPad) + float64(i)*group, Y: chartHeight - chartPad + 14, Text: m})
	}
	for j, q := range quantiles {
		c.Legend = append(c.Legend, chartLegend{X: chartWidth - chartPad - 120 + j*40, Y: 22, Fill: chartColors[j], Label: q})
	}
	return c
}

// ttftChart plots each measured request's TTFT against its arrival time.
func ttftChart(r *report.Report) *scatterChart {
	if len(r.TTFTSeries) == 0 {
		return nil
	}
	maxX, maxY := 0.0, 0.0
	for _, p := range r.TTFTSeries {
		maxX, maxY = max(maxX, p[0]), max(maxY, p[1])
	}
	maxX, maxY = max(maxX, 1e-9), max(maxY, 1e-9)
	c := &scatterChart{
		Width: chartWidth, Height: chartHeight, Pad: chartPad, Right: chartWidth - chartPad, Bottom: chartHeight - chartPad,
		Title: fmt.Sprintf("TTFT over the burst (max %.3gs over %.3gs)", maxY, maxX),
		Fill:  chartColors[0],
	}
	for _, p := range r.TTFTSeries {
		c.Points = append(c.Points, chartPoint{
			X: float64(chartPad) + p[0]/maxX*float64(chartWidth-2*chartPad),
			Y: float64(chartHeight-chartPad) - p[1]/maxY*float64(chartHeight-2*chartPad),
		})
	}
	return c
}
