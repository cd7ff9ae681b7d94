package compare

import (
	"math"
	"time"

	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/stats"
)

// metricNames compared, by their label value.
var metricNames = []string{"ttft", "tpot", "itl", "e2e"}

const (
	mTTFT = iota
	mTPOT
	mITL
	mE2E
	numMetrics
)

// Percentiles judged, by their label value (not `quantile`, which
// belongs to summaries, as in llmprobe_burst_latency_seconds): the median by the paired
// signed-rank test, the tails by the ratio of quantiles once the pairs
// reach stats.MinSamples.
var percentiles = []struct {
	label string
	q     float64
}{{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}}

// alwaysOnSide is one request's figures in seconds; a metric it did not produce
// (TPOT of a one-token answer) is NaN.
type alwaysOnSide [numMetrics]float64

// sideOf reads a successful result's figures.
func sideOf(r *prober.Result) alwaysOnSide {
	s := alwaysOnSide{math.NaN(), math.NaN(), math.NaN(), r.E2E.Seconds()}
	if r.FirstTokenSeen() {
		s[mTTFT] = r.TTFT.Seconds()
		if r.OutputTokens > 1 {
			s[mTPOT] = r.TPOT.Seconds()
		}
	}
	if len(r.ITL) > 0 {
		var sum time.Duration
		for _, d := range r.ITL {
			sum += d
		}
		s[mITL] = sum.Seconds() / float64(len(r.ITL)) // the request's mean gap
	}
	return s
}

// alwaysOnPair is one tick: the same prompt sent to both targets at the same moment.
type alwaysOnPair struct {
	at         time.Time
	base, cand alwaysOnSide
}

// Verdicts, the value of llmprobe_comparison_verdict.
const (
	windowBetter = -1
	windowNone   = 0
	windowWorse  = 1
)

// windowFigure is one (metric, percentile) of a window: the candidate's ratio to
// the baseline with its 95 % interval, and a verdict once the pairs reach
// min_pairs.
type windowFigure struct {
	Metric, Percentile string
	N                  int
	Ratio              float64
	// Lower and Upper hold the interval when Bounded.
	Lower, Upper float64
	Bounded      bool
	// Judged is false before min_pairs: Verdict is then meaningless.
	Judged  bool
	Verdict int
}

// evaluate judges the pairs metric by metric: a figure exists only where
// the pairs give one, so a metric that does not apply is absent, never 0.
func evaluate(pairs []alwaysOnPair, minPairs int, tolerance float64) []windowFigure {
	var out []windowFigure
	for m, name := range metricNames {
		var base, cand, logs []float64
		for _, p := range pairs {
			b, c := p.base[m], p.cand[m]
			if !(b > 0 && c > 0) { // NaN or a zero that no ratio can use
				continue
			}
			base, cand, logs = append(base, b), append(cand, c), append(logs, math.Log(c/b))
		}
		if len(logs) == 0 {
			continue
		}
		for _, q := range percentiles {
			f := windowFigure{Metric: name, Percentile: q.label, N: len(logs)}
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
				f.Verdict = windowVerdict(f, tolerance)
			}
			out = append(out, f)
		}
	}
	return out
}

// windowVerdict is compare's rule on the log ratio (the interval beyond 1 and
// the ratio beyond 1 + tolerance, or below 1/(1 + tolerance)), as the
// metric's value: 1 worse, −1 better, 0 none.
func windowVerdict(f windowFigure, tolerance float64) int {
	switch Judge(math.Log(f.Ratio), math.Log(f.Lower), math.Log(f.Upper), math.Log1p(tolerance), nil) {
	case Worse:
		return windowWorse
	case Better:
		return windowBetter
	}
	return windowNone
}
