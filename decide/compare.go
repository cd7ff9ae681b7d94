// Package decide holds every rule that turns measurements into a verdict,
// so that each claim llmprobe makes is decided in one place: two targets
// compared on paired requests (llmprobe compare, always-on comparisons), a
// burst's SLO gates, its regression against a baseline and its
// max_regression gates, an engine upgrade, a sweep's steps, and the burst's
// verdict as a whole.
package decide

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/stats"
)

// Verdict is what a comparison found, per metric and overall.
type Verdict string

const (
	Worse        Verdict = "worse"
	Better       Verdict = "better"
	NoDifference Verdict = "no significant difference"
	// TooFew: fewer pairs than the quantile needs (stats.MinSamples).
	TooFew Verdict = "too few"
	// NotApplicable: no pair has the metric, since no answer of the burst
	// does (embeddings, rerank and unstreamed answers have no token times).
	NotApplicable Verdict = "n/a"
	// Inconclusive: the rounds disagree in direction, or the client was
	// saturated, or nothing could be decided.
	Inconclusive Verdict = "inconclusive"
	NotMeasured  Verdict = "not measured"
)

// DefaultTolerance is the change a verdict needs besides significance
// where the burst's max_regression names none for the metric: 10 %.
const DefaultTolerance = 0.10

// Metric is the verdict on one metric and quantile. For latencies the
// estimate and its interval are candidate/baseline ratios; for goodput,
// the candidate's ratio minus the baseline's.
type Metric struct {
	Metric   string `json:"metric"`
	Quantile string `json:"quantile,omitempty"`
	// Method: signed-rank (Hodges–Lehmann interval of per-request log
	// ratios), bootstrap (paired, stratified by round) or newcombe.
	Method    string   `json:"method"`
	Pairs     int      `json:"pairs"`
	Needs     int      `json:"needs"`
	Estimate  *float64 `json:"estimate"`
	Lower     *float64 `json:"lower"`
	Upper     *float64 `json:"upper"`
	P         *float64 `json:"p_value,omitempty"`
	Tolerance float64  `json:"tolerance"`
	// Rounds holds each round's own estimate (nil: none in that round).
	Rounds  []*float64 `json:"rounds"`
	Verdict Verdict    `json:"verdict"`
}

// Side is what a comparison's verdict needs of one side: its target, the
// runs against it that stopped early, and whether its client was saturated.
type Side struct {
	Target          string
	Aborted         []string
	ClientSaturated bool
}

// Methods of Metric.
const (
	MethodSignedRank = "signed-rank"
	MethodBootstrap  = "bootstrap"
	MethodNewcombe   = "newcombe"
)

// MedianShift compares the p50 of metric m from paired samples (cand[i]
// and base[i] are one request on both sides, measured in round strata[i]
// of rounds): the Hodges–Lehmann estimate of the per-request log ratios
// with its 95 % interval and the signed-rank test, printed as ratios.
func MedianShift(m string, base, cand []float64, strata []int, rounds int, tol float64) Metric {
	out := Metric{Metric: m, Quantile: "p50", Method: MethodSignedRank, Pairs: len(base), Needs: stats.MinSamples(0.5), Tolerance: tol}
	d := logRatios(base, cand)
	byRound := make([][]float64, rounds)
	for i, x := range d {
		byRound[strata[i]] = append(byRound[strata[i]], x)
	}
	perRound := make([]float64, rounds)
	for k, dk := range byRound {
		perRound[k] = math.NaN()
		if len(dk) > 0 {
			perRound[k] = stats.PairedShift(dk).Estimate
		}
		out.Rounds = append(out.Rounds, ratioOf(perRound[k]))
	}
	if len(d) == 0 {
		out.Verdict = TooFew
		return out
	}
	s := stats.PairedShift(d)
	out.Estimate, out.P = ratioOf(s.Estimate), &s.P
	if len(d) < out.Needs || !s.Bounded {
		out.Verdict = TooFew
		return out
	}
	out.Lower, out.Upper = ratioOf(s.Lower), ratioOf(s.Upper)
	out.Verdict = Judge(s.Estimate, s.Lower, s.Upper, math.Log1p(tol), perRound)
	return out
}

// TailRatio compares the q-quantile of metric m: the ratio of the
// candidate's to the baseline's, with the 95 % interval of a paired
// bootstrap stratified by round; too few below stats.MinSamples(q).
func TailRatio(m string, q float64, base, cand []float64, strata []int, rounds int, tol float64) Metric {
	name := "p" + strconv.FormatFloat(math.Round(q*1000)/10, 'g', -1, 64)
	out := Metric{Metric: m, Quantile: name, Method: MethodBootstrap, Pairs: len(base), Needs: stats.MinSamples(q), Tolerance: tol}
	perRound := make([]float64, rounds)
	for k := range rounds {
		var b, c []float64
		for i, s := range strata {
			if s == k {
				b, c = append(b, base[i]), append(c, cand[i])
			}
		}
		perRound[k] = math.NaN()
		if len(b) > 0 {
			perRound[k] = math.Log(quantileRatio(b, c, q))
		}
		out.Rounds = append(out.Rounds, ratioOf(perRound[k]))
	}
	if len(base) == 0 {
		out.Verdict = TooFew
		return out
	}
	out.Estimate = ratioOf(math.Log(quantileRatio(base, cand, q)))
	if len(base) < out.Needs {
		out.Verdict = TooFew
		return out
	}
	r, lo, hi, ok := stats.QuantileRatio(base, cand, strata, q)
	if !ok {
		out.Verdict = TooFew
		return out
	}
	out.Estimate, out.Lower, out.Upper = &r, &lo, &hi
	out.Verdict = Judge(math.Log(r), math.Log(lo), math.Log(hi), math.Log1p(tol), perRound)
	return out
}

// Goodput compares the share of good requests: good[k] of judged[k] per
// round k, baseline [0] and candidate [1]; the estimate is the candidate's
// share minus the baseline's with Newcombe's interval, worse when it drops
// by more than tol of the baseline's share.
func Goodput(good, judged [][2]int, tol float64) Metric {
	out := Metric{Metric: "goodput", Method: MethodNewcombe, Needs: 1, Tolerance: tol}
	var g, n [2]int
	perRound := make([]float64, len(good))
	for k := range good {
		for s := range 2 {
			g[s], n[s] = g[s]+good[k][s], n[s]+judged[k][s]
		}
		perRound[k] = math.NaN()
		if judged[k][0] > 0 && judged[k][1] > 0 {
			d := float64(good[k][1])/float64(judged[k][1]) - float64(good[k][0])/float64(judged[k][0])
			perRound[k] = -d // above 0 is worse
			out.Rounds = append(out.Rounds, &d)
		} else {
			out.Rounds = append(out.Rounds, nil)
		}
	}
	out.Pairs = min(n[0], n[1])
	diff, lo, hi, ok := stats.ProportionDiff(g[0], n[0], g[1], n[1])
	if !ok {
		out.Verdict = TooFew
		return out
	}
	out.Estimate, out.Lower, out.Upper = &diff, &lo, &hi
	margin := tol * float64(g[0]) / float64(n[0])
	out.Verdict = Judge(-diff, -hi, -lo, margin, perRound)
	return out
}

// Judge classifies an effect signed so that above 0 is worse: est with
// its 95 % interval [lo, hi] and each round's own estimate (NaN: none).
// Worse needs the interval above 0 and the estimate beyond margin; better
// mirrors it; either turns inconclusive when a round points the other way
// or not at all.
func Judge(est, lo, hi, margin float64, rounds []float64) Verdict {
	var v Verdict
	switch {
	case lo > 0 && est > margin:
		v = Worse
	case hi < 0 && est < -margin:
		v = Better
	default:
		return NoDifference
	}
	for _, r := range rounds {
		if (v == Worse && r <= 0) || (v == Better && r >= 0) {
			return Inconclusive
		}
	}
	return v
}

// Overall is the comparison's verdict, from its metrics, the pairs they
// rest on and each side's runs: not measured without pairs;
// inconclusive with a saturated client (worse when the answers are) or
// when no latency could be decided;
// else worse if any metric is worse, inconclusive if any is, better if any
// is and the answers are not significantly worse, and no significant
// difference otherwise.
func Overall(metrics []Metric, pairs int, sides [2]Side) (Verdict, []string) {
	var reasons []string
	for _, s := range sides {
		for _, a := range s.Aborted {
			reasons = append(reasons, fmt.Sprintf("a run against %s stopped early: %s", s.Target, a))
		}
	}
	if pairs == 0 {
		return NotMeasured, append(reasons, "no request succeeded on both sides")
	}
	for _, s := range sides {
		if s.ClientSaturated {
			reasons = append(reasons, fmt.Sprintf("the client was saturated in a run against %s: its own delays could explain a difference", s.Target))
		}
	}
	count, latencies := map[Verdict]int{}, 0
	for _, m := range metrics {
		count[m.Verdict]++
		if !m.IsShare() && m.Verdict != TooFew && m.Verdict != NotApplicable {
			latencies++
		}
		if m.Verdict == Inconclusive {
			reasons = append(reasons, fmt.Sprintf("%s: the rounds disagree in direction", m.Name()))
		}
	}
	saturated := sides[0].ClientSaturated || sides[1].ClientSaturated
	switch {
	case saturated && slices.ContainsFunc(metrics, func(m Metric) bool { return m.Metric == "quality" && m.Verdict == Worse }):
		// No delay of the client's fails an answer's checks.
		return Worse, append(reasons, "the answers are worse whatever the client's delays, which leave the latencies undecided")
	case saturated:
		return Inconclusive, reasons
	case count[Worse] > 0:
		return Worse, reasons
	case count[Inconclusive] > 0:
		return Inconclusive, reasons
	case latencies == 0:
		return Inconclusive, append(reasons, fmt.Sprintf("%d pairs are too few for any latency", pairs))
	case count[Better] > 0 && slices.ContainsFunc(metrics, Metric.SignificantlyWorse):
		// Faster output may be worse output: never better with worse answers.
		return NoDifference, append(reasons, "its answers passed their checks significantly less often (within the quality tolerance): a faster candidate with worse answers is not better")
	case count[Better] > 0:
		return Better, reasons
	}
	return NoDifference, reasons
}

// IsShare reports whether m compares shares of requests (goodput,
// quality): its estimate is a difference in points, not a ratio.
func (m Metric) IsShare() bool { return m.Metric == "goodput" || m.Metric == "quality" }

// Name is the metric with its quantile, like "tpot p50".
func (m Metric) Name() string {
	if m.Quantile == "" {
		return m.Metric
	}
	return m.Metric + " " + m.Quantile
}

// Tolerance is the burst's max_regression for metric at quantile, else
// DefaultTolerance.
func Tolerance(b config.Burst, metric, quantile string) float64 {
	for _, r := range b.MaxRegression {
		if r.Metric == metric && r.Quantile == quantile {
			return r.MaxIncrease
		}
	}
	return DefaultTolerance
}

// logRatios are log(cand[i]/base[i]).
func logRatios(base, cand []float64) []float64 {
	d := make([]float64, len(base))
	for i := range base {
		d[i] = math.Log(cand[i] / base[i])
	}
	return d
}

// quantileRatio is the ratio of cand's q-quantile to base's.
func quantileRatio(base, cand []float64, q float64) float64 {
	return stats.Quantile(slices.Sorted(slices.Values(cand)), q) / stats.Quantile(slices.Sorted(slices.Values(base)), q)
}

// ratioOf is exp(x), or nil for NaN.
func ratioOf(x float64) *float64 {
	if math.IsNaN(x) {
		return nil
	}
	v := math.Exp(x)
	return &v
}

// Inapplicable is the verdict on a metric that no pair has, since no
// answer of the burst does (embeddings, rerank and unstreamed answers have
// no token times).
func Inapplicable(metric, quantile string) Metric {
	return Metric{Metric: metric, Quantile: quantile, Verdict: NotApplicable}
}
