package chart

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/llmprobe/llmprobe/lib/figure"
	"github.com/llmprobe/llmprobe/report"
)

// Colors of the curve's marks beside the series': the SLO line and the knee.
const sloColor, kneeColor = "#e15759", "#999999"

// Curve draws a sweep's QPS–latency curve of metric (ttft, tpot): p50 and
// p99 against the offered rate, the SLO as a horizontal line and the knee
// as a vertical one; nil without a sweep or samples of metric.
func Curve(r *report.Report, metric string) *Chart {
	steps := slices.Clone(r.Sweep)
	slices.SortStableFunc(steps, func(a, b report.SweepStep) int { return cmp.Compare(a.Rate, b.Rate) })
	maxRate, maxMS := 0.0, 0.0
	for _, s := range steps {
		maxRate = max(maxRate, s.Rate)
		if l := s.Latency[metric]; l.Count > 0 {
			maxMS = max(maxMS, 1000*l.P99)
		}
	}
	if maxMS == 0 {
		return nil
	}
	var slo, knee *float64
	if k := r.Knee; k != nil {
		if v, ok := k.Objectives[metric]; ok {
			ms := 1000 * v
			slo, maxMS = &ms, max(maxMS, ms)
		}
		knee = k.Passing
	}
	name := map[string]string{"ttft": "TTFT", "tpot": "TPOT"}[metric]
	c := newChart("chart curve curve-"+metric, name+" per offered rate", "QPS–latency curve: "+name, "offered rate (req/s)", name+" (ms)")
	x, y := c.xAxis(maxRate), c.yAxis(maxMS)
	colors, labels := []string{chartColors[0], chartColors[1]}, []string{"p50", "p99"}
	for i, q := range labels {
		line, dots := series{Color: colors[i], Line: true}, series{Color: colors[i]}
		for _, s := range steps {
			if l := s.Latency[metric]; l.Count > 0 {
				v := 1000 * l.Quantile(q)
				p := point{X: x(s.Rate), Y: y(v), Title: fmt.Sprintf("%.4g req/s offered: %s %s %s", s.Rate, name, q, figure.PageMs(v/1000))}
				line.Points, dots.Points = append(line.Points, p), append(dots.Points, p)
			}
		}
		c.Series = append(c.Series, line, dots)
	}
	if slo != nil {
		c.Series = append(c.Series, series{Color: sloColor, Line: true, Points: []point{{X: c.Left, Y: y(*slo)}, {X: c.Right, Y: y(*slo)}}})
		colors, labels = append(colors, sloColor), append(labels, fmt.Sprintf("SLO %.4g ms", *slo))
	}
	if knee != nil {
		c.Series = append(c.Series, series{Color: kneeColor, Line: true, Points: []point{{X: x(*knee), Y: c.Top}, {X: x(*knee), Y: c.Bottom}}})
		colors, labels = append(colors, kneeColor), append(labels, fmt.Sprintf("knee %.4g req/s", *knee))
	}
	c.legend(colors, labels)
	return c
}

// Frontier draws the throughput–latency frontier of a sweep: each step's
// TTFT p99 and TPOT p99 against the output tokens per second it achieved;
// nil without a sweep that measured tokens.
func Frontier(r *report.Report) *Chart {
	type step struct{ tps, ttft, tpot float64 }
	var steps []step
	maxTPS, maxMS := 0.0, 0.0
	for _, s := range r.Sweep {
		ttft, tpot := s.Latency["ttft"], s.Latency["tpot"]
		if s.Throughput.OutputTokens == nil || ttft.Count == 0 {
			continue
		}
		st := step{tps: *s.Throughput.OutputTokens, ttft: 1000 * ttft.P99}
		if tpot.Count > 0 {
			st.tpot = 1000 * tpot.P99
		}
		steps = append(steps, st)
		maxTPS, maxMS = max(maxTPS, st.tps), max(maxMS, st.ttft, st.tpot)
	}
	if len(steps) == 0 {
		return nil
	}
	slices.SortFunc(steps, func(a, b step) int { return cmp.Compare(a.tps, b.tps) })
	c := newChart("chart frontier", "latency per output tokens per second", "Throughput–latency frontier", "achieved output tokens per second", "latency p99 (ms)")
	x, y := c.xAxis(maxTPS), c.yAxis(maxMS)
	for i, m := range []string{"TTFT", "TPOT"} {
		line, dots := series{Color: chartColors[i], Line: true}, series{Color: chartColors[i]}
		for _, s := range steps {
			v := s.ttft
			if m == "TPOT" {
				v = s.tpot
			}
			if v == 0 {
				continue
			}
			p := point{X: x(s.tps), Y: y(v), Title: fmt.Sprintf("%.1f output tok/s: %s p99 %s", s.tps, m, figure.PageMs(v/1000))}
			line.Points, dots.Points = append(line.Points, p), append(dots.Points, p)
		}
		c.Series = append(c.Series, line, dots)
	}
	c.legend(chartColors[:2], []string{"TTFT p99", "TPOT p99"})
	return c
}
