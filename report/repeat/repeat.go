// Package repeat combines the runs of a burst run N times (repeat: N) into
// one report with run-level figures: each figure's value per run, and its
// mean with a Student-t interval.
package repeat

import (
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/stats"
)

// metrics are the latencies whose percentiles are compared run by run.
var metrics = []string{"ttft", "itl", "tpot", "e2e"}

// Combine gives the last of runs (at least one, in the order run) with
// the run-level figures of all of them; one run is returned as it is.
func Combine(runs []*report.Report) *report.Report {
	last := runs[len(runs)-1]
	if len(runs) < 2 {
		return last
	}
	rep := &report.Repeat{Runs: len(runs)}
	tokens := 0
	for _, r := range runs {
		rep.RunIDs = append(rep.RunIDs, r.ID)
		tokens += r.AllOutputTokens
	}
	// The GPUs were read around all the runs: energy per token over all.
	last.AllOutputTokens = tokens
	for _, m := range metrics {
		for _, q := range config.BurstQuantiles {
			rep.Figures = append(rep.Figures, figure(m, q, runs, func(r *report.Report) *float64 { return r.Latency[m].Measured(q) }))
		}
	}
	rep.Figures = append(rep.Figures,
		figure("goodput_ratio", "", runs, func(r *report.Report) *float64 { return r.Goodput.Ratio }),
		figure("output_tokens_per_second", "", runs, func(r *report.Report) *float64 { return r.Throughput.OutputTokens }))
	last.Repeat = rep
	return last
}

// figure is one figure of the runs that measured it.
func figure(metric, quantile string, runs []*report.Report, of func(*report.Report) *float64) report.RunFigure {
	f := report.RunFigure{Metric: metric, Quantile: quantile, Values: []float64{}}
	for _, r := range runs {
		if v := of(r); v != nil {
			f.Values = append(f.Values, *v)
		}
	}
	if len(f.Values) == 0 {
		return f
	}
	mean, lo, hi, ok := stats.MeanInterval(f.Values)
	f.Mean = &mean
	if ok {
		f.Interval = &stats.Interval{Lo: &lo, Hi: &hi}
	}
	return f
}
