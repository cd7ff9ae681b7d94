package decide

import (
	"math"
	"slices"

	"github.com/llmprobe/llmprobe/stats"
)

// Percentiles shown, by their label value (not `quantile`, which belongs
// to summaries, as in llmprobe_burst_latency_seconds): the median with its
// confidence sequence, on which the epoch decides (Anytime), and the tails
// by the ratio of quantiles once the pairs reach stats.MinSamples, for
// people only.
var windowPercentiles = []struct {
	label string
	q     float64
}{{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}}

// WindowFigure is one (metric, percentile) of an always-on comparison's
// epoch: the candidate's ratio to the baseline with its interval. It
// decides nothing: the epoch's decision is Anytime's, on the same pairs.
type WindowFigure struct {
	Metric, Percentile string
	N                  int
	Ratio              float64
	// Lower and Upper hold the interval when Bounded.
	Lower, Upper float64
	Bounded      bool
	// Sequence: the interval is the median's confidence sequence at the
	// epoch's threshold, valid at every look (p50); else a paired
	// bootstrap's 95 % interval, valid for one look.
	Sequence bool
}

// Window is one metric of an always-on comparison's epoch: base[i] and
// cand[i] are the two sides of pair i. At p50 the median of the paired
// ratios within its confidence sequence at logThreshold (the interval the
// decision reads); at p90 and p99, once the pairs reach stats.MinSamples,
// the ratio of the percentiles with a paired bootstrap interval.
func Window(metric string, base, cand []float64, logThreshold float64) []WindowFigure {
	if len(base) == 0 {
		return nil
	}
	logs := make([]float64, len(base))
	for i := range base {
		logs[i] = math.Log(cand[i] / base[i])
	}
	sorted := slices.Sorted(slices.Values(logs))
	var out []WindowFigure
	for _, q := range windowPercentiles {
		if q.q == 0.5 {
			out = append(out, medianOf(metric, sorted, logThreshold))
			continue
		}
		if len(logs) < stats.MinSamples(q.q) {
			continue // too few for this tail: absent
		}
		f := WindowFigure{Metric: metric, Percentile: q.label, N: len(logs)}
		var ok bool
		if f.Ratio, f.Lower, f.Upper, ok = stats.QuantileRatio(base, cand, nil, q.q); f.Ratio <= 0 {
			continue
		}
		f.Bounded = ok
		out = append(out, f)
	}
	return out
}

// Median is the p50 figure of Window alone: what a decision is taken on,
// without the tails' bootstraps.
func Median(metric string, base, cand []float64, logThreshold float64) WindowFigure {
	logs := make([]float64, len(base))
	for i := range base {
		logs[i] = math.Log(cand[i] / base[i])
	}
	return medianOf(metric, slices.Sorted(slices.Values(logs)), logThreshold)
}

func medianOf(metric string, sorted []float64, logThreshold float64) WindowFigure {
	f := WindowFigure{Metric: metric, Percentile: "p50", N: len(sorted), Sequence: true}
	if len(sorted) == 0 {
		return f
	}
	f.Ratio = math.Exp(stats.Quantile(sorted, 0.5))
	if lo, hi, ok := stats.MedianSequence(sorted, logThreshold); ok {
		f.Lower, f.Upper, f.Bounded = math.Exp(lo), math.Exp(hi), true
	}
	return f
}
