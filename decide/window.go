package decide

import (
	"math"

	"github.com/llmprobe/llmprobe/stats"
)

// Percentiles judged, by their label value (not `quantile`, which
// belongs to summaries, as in llmprobe_burst_latency_seconds): the median by the paired
// signed-rank test, the tails by the ratio of quantiles once the pairs
// reach stats.MinSamples.
var windowPercentiles = []struct {
	label string
	q     float64
}{{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}}

// Verdicts, the value of llmprobe_comparison_verdict.
const (
	WindowBetter = -1
	WindowNone   = 0
	WindowWorse  = 1
)

// WindowFigure is one (metric, percentile) of a window: the candidate's ratio to
// the baseline with its 95 % interval, and a verdict once the pairs reach
// min_pairs.
type WindowFigure struct {
	Metric, Percentile string
	N                  int
	Ratio              float64
	// Lower and Upper hold the interval when Bounded.
	Lower, Upper float64
	Bounded      bool
	// Judged is false before min_pairs: Verdict is then meaningless.
	Judged  bool
	Verdict int
	// Within: a judged figure whose interval shows it within the
	// tolerance (Verdict 0); a 0 without it has not enough evidence.
	Within bool
}

// Window judges one metric of an always-on comparison's window: base[i]
// and cand[i] are the two sides of pair i. At p50 the Hodges–Lehmann
// median of the paired log ratios with its signed-rank interval; at p90
// and p99, once the pairs reach stats.MinSamples, the ratio of the
// percentiles. A figure has a verdict once it rests on minPairs pairs and
// an interval.
func Window(metric string, base, cand []float64, minPairs int, tolerance float64) []WindowFigure {
	if len(base) == 0 {
		return nil
	}
	logs := make([]float64, len(base))
	for i := range base {
		logs[i] = math.Log(cand[i] / base[i])
	}
	var out []WindowFigure
	for _, q := range windowPercentiles {
		f := WindowFigure{Metric: metric, Percentile: q.label, N: len(logs)}
		if q.q == 0.5 {
			s := stats.PairedShift(logs)
			f.Ratio, f.Lower, f.Upper, f.Bounded = math.Exp(s.Estimate), math.Exp(s.Lower), math.Exp(s.Upper), s.Bounded
		} else {
			if len(logs) < stats.MinSamples(q.q) {
				continue // too few for this tail: absent
			}
			var ok bool
			if f.Ratio, f.Lower, f.Upper, ok = stats.QuantileRatio(base, cand, nil, q.q); f.Ratio <= 0 {
				continue
			}
			f.Bounded = ok
		}
		f.Judged = f.N >= minPairs && f.Bounded
		if f.Judged {
			f.Verdict, f.Within = windowVerdict(f, tolerance)
		}
		out = append(out, f)
	}
	return out
}

// windowVerdict is Rule on the log ratio (the interval beyond 1 +
// tolerance, or below 1/(1 + tolerance)), as the metric's value: 1 worse,
// −1 better, 0 neither; within says whether a 0 is shown within it.
func windowVerdict(f WindowFigure, tolerance float64) (verdict int, within bool) {
	switch Rule(math.Log(f.Lower), math.Log(f.Upper), math.Log1p(tolerance)) {
	case Worse:
		return WindowWorse, false
	case Better:
		return WindowBetter, false
	case Within:
		return WindowNone, true
	}
	return WindowNone, false
}
