package report

import (
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/stats"
)

// Repeat is a burst run N times (repeat: N): each figure per run, and its
// mean with the 95 % Student-t interval (none below 3 runs). The report's
// other figures and its SLO gates are its last run's.
type Repeat struct {
	Runs    int         `json:"runs"`
	RunIDs  []string    `json:"run_ids"`
	Figures []RunFigure `json:"figures"`
}

// RunFigure is one figure across the runs that measured it: a latency
// percentile (Metric, Quantile), goodput_ratio or output_tokens_per_second.
type RunFigure struct {
	Metric   string          `json:"metric"`
	Quantile string          `json:"quantile,omitempty"`
	Values   []float64       `json:"values"`
	Mean     *float64        `json:"mean"`
	Interval *stats.Interval `json:"interval,omitempty"`
}

// Figure returns the named figure, or nil.
func (r *Repeat) Figure(metric, quantile string) *RunFigure {
	if r == nil {
		return nil
	}
	for i := range r.Figures {
		if f := &r.Figures[i]; f.Metric == metric && f.Quantile == quantile {
			return f
		}
	}
	return nil
}

// repeatMetrics are the latencies whose percentiles are compared run by run.
var repeatMetrics = []string{"ttft", "itl", "tpot", "e2e"}

// CombineRuns gives the last of runs (at least one, in the order run) with
// the run-level figures of all of them; one run is returned as it is.
func CombineRuns(runs []*Report) *Report {
	last := runs[len(runs)-1]
	if len(runs) < 2 {
		return last
	}
	rep := &Repeat{Runs: len(runs)}
	tokens := 0
	for _, r := range runs {
		rep.RunIDs = append(rep.RunIDs, r.ID)
		tokens += r.AllOutputTokens
	}
	// The GPUs were read around all the runs: energy per token over all.
	last.AllOutputTokens = tokens
	for _, m := range repeatMetrics {
		for _, q := range config.BurstQuantiles {
			rep.Figures = append(rep.Figures, runFigure(m, q, runs, func(r *Report) *float64 { return r.Latency[m].Measured(q) }))
		}
	}
	rep.Figures = append(rep.Figures,
		runFigure("goodput_ratio", "", runs, func(r *Report) *float64 { return r.Goodput.Ratio }),
		runFigure("output_tokens_per_second", "", runs, func(r *Report) *float64 { return r.Throughput.OutputTokens }))
	last.Repeat = rep
	return last
}

// runFigure is one runFigure of the runs that measured it.
func runFigure(metric, quantile string, runs []*Report, of func(*Report) *float64) RunFigure {
	f := RunFigure{Metric: metric, Quantile: quantile, Values: []float64{}}
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
