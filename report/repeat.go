package report

import "github.com/llmprobe/llmprobe/stats"

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
