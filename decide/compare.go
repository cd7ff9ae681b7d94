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
	// Worse: the interval shows the candidate worse beyond the tolerance.
	Worse Verdict = "worse"
	// Better: the interval shows it better beyond the tolerance.
	Better Verdict = "better"
	// Within: the interval shows any change within the tolerance.
	Within Verdict = "within tolerance"
	// NotEnough: the interval reaches across the tolerance, so the sample
	// shows neither; Metric.SettleRounds says what would settle it.
	NotEnough Verdict = "not enough evidence"
	// TooFew: fewer pairs than the figure needs for an interval at all.
	TooFew Verdict = "too few"
	// NotApplicable: no pair has the metric, since no answer of the burst
	// does (embeddings, rerank and unstreamed answers have no token times).
	NotApplicable Verdict = "n/a"
	// Inconclusive: a burst's failure that llmprobe's own delays may
	// explain.
	Inconclusive Verdict = "inconclusive"
	NotMeasured  Verdict = "not measured"
)

// DefaultTolerance is the change a latency may show before it counts,
// where the burst's max_regression names none for the metric: 10 %.
const DefaultTolerance = 0.10

// GoodputTolerance is the drop in the share of good requests that counts:
// 2 percentage points, absolute, so that 99 % → 90 % (ten times the bad
// requests) counts as it should, which 10 % of the good share would not.
const GoodputTolerance = 0.02

// maxSettleRounds bounds the rounds a metric's "would settle it" names.
const maxSettleRounds = 100

// Metric is the verdict on one metric and quantile. For latencies the
// estimate and its interval are candidate/baseline ratios; for shares,
// the candidate's share minus the baseline's.
type Metric struct {
	Metric   string `json:"metric"`
	Quantile string `json:"quantile,omitempty"`
	// Method is the estimate within each round (hodges-lehmann,
	// quantile-ratio, agresti-caffo; mcnemar over all pairs), pooled over
	// the rounds by stats.PoolRounds.
	Method   string   `json:"method"`
	Pairs    int      `json:"pairs"`
	Needs    int      `json:"needs"`
	Estimate *float64 `json:"estimate"`
	Lower    *float64 `json:"lower"`
	Upper    *float64 `json:"upper"`
	P        *float64 `json:"p_value,omitempty"`
	// Tolerance is the change that counts: a ratio's fraction (0.1 =
	// 10 %), a share's points (0.02 = 2 pp).
	Tolerance float64 `json:"tolerance"`
	// Rounds holds each round's own estimate (nil: none in that round).
	Rounds []*float64 `json:"rounds"`
	// Spread is the between-round standard deviation of the effect, on
	// the estimate's scale (log ratio, or share).
	Spread *float64 `json:"between_round_spread,omitempty"`
	// Judged: the metric sets the comparison's verdict (the p50s,
	// goodput, quality, and a tail that max_regression names).
	Judged  bool    `json:"judged"`
	Verdict Verdict `json:"verdict"`
	// SettleRounds, when the verdict is not enough evidence, is how many
	// rounds at the observed spread would settle it; 0: none up to 100.
	SettleRounds int `json:"settle_rounds,omitempty"`
	// SettlePairs is the same for a metric whose replicates are pairs
	// (quality): about how many pairs would settle it.
	SettlePairs int `json:"settle_pairs,omitempty"`
	// WithoutOwnDelay is the interval's reach once llmprobe's own delay is
	// taken off each pair, from its smallest to its largest possible end;
	// set where that delay could change the verdict (OwnDelayDecides).
	WithoutOwnDelay *[2]float64 `json:"without_own_delay,omitempty"`
	// OwnDelayDecides: the verdict as measured differs from one without
	// llmprobe's own delay, so the metric has not enough evidence.
	OwnDelayDecides bool `json:"own_delay_decides,omitempty"`
}

// WithoutOwnDelay settles m, judged on the values as measured, with the
// same metric judged at its extremes once llmprobe's own delay is taken off
// each pair (low: the smallest the effect could be, high: the largest).
// A saturated client thus neither hides a change larger than what it
// could add nor invents one: worse only when low is, better only when high
// is, within only when high is; else not enough evidence, which the delay
// decides when m as measured had a verdict.
func WithoutOwnDelay(m, low, high Metric) Metric {
	switch {
	case low.Verdict == Worse:
		m.Verdict = Worse
	case high.Verdict == Better:
		m.Verdict = Better
	case high.Verdict == Within:
		m.Verdict = Within
	case m.Verdict == Worse || m.Verdict == Within || m.Verdict == Better:
		m.Verdict, m.OwnDelayDecides, m.SettleRounds = NotEnough, true, 0
		if low.Lower != nil && high.Upper != nil {
			m.WithoutOwnDelay = &[2]float64{*low.Lower, *high.Upper}
		}
	}
	return m
}

// Side is what a comparison's verdict needs of one side: its target and
// the runs against it that stopped early.
type Side struct {
	Target  string
	Aborted []string
}

// Methods of Metric.
const (
	MethodHodgesLehmann = "hodges-lehmann"
	MethodQuantileRatio = "quantile-ratio"
	MethodAgrestiCaffo  = "agresti-caffo"
)

// Rule is llmprobe's one rule for a verdict, on an effect signed so that
// above 0 is worse, with its 95 % interval [lo, hi] and the tolerance
// margin: worse when the interval lies beyond the margin, better when it
// lies beyond it the other way, within when it lies inside the margin on
// the worse side, and not enough evidence when it reaches across.
func Rule(lo, hi, margin float64) Verdict {
	switch {
	case lo > margin:
		return Worse
	case hi < -margin:
		return Better
	case hi < margin:
		return Within
	}
	return NotEnough
}

// pooled judges metric out from its rounds' estimates y and within-round
// variances v (above 0 is worse, margin the tolerance on that scale);
// toRatio turns the effect into the printed figure (exp for log ratios,
// negation for shares). False when the rounds cannot be pooled.
func (out *Metric) pooled(y, v []float64, margin float64, printed func(float64) float64) bool {
	p, ok := stats.PoolRounds(y, v)
	if !ok {
		return false
	}
	est, lo, hi := printed(p.Estimate), printed(p.Lower), printed(p.Upper)
	if lo > hi {
		lo, hi = hi, lo
	}
	out.Estimate, out.Lower, out.Upper, out.Spread = &est, &lo, &hi, &p.Between
	out.Verdict = Rule(p.Lower, p.Upper, margin)
	if out.Verdict == NotEnough {
		out.SettleRounds = stats.RoundsToSettle(p.Estimate, p.SE, p.Rounds, margin, maxSettleRounds)
	}
	return true
}

// byRound splits the pairs' indices by round.
func byRound(strata []int, rounds int) [][]int {
	out := make([][]int, rounds)
	for i, k := range strata {
		out[k] = append(out[k], i)
	}
	return out
}

// MedianShift compares the p50 of metric m from paired samples (cand[i]
// and base[i] are one request on both sides, measured in round strata[i]
// of rounds): each round's Hodges–Lehmann estimate of the per-request log
// ratios with its variance from the round's own interval, pooled over the
// rounds and printed as ratios. A round with fewer pairs than a
// Hodges–Lehmann interval needs leaves the metric too few.
func MedianShift(m string, base, cand []float64, strata []int, rounds int, tol float64) Metric {
	out := Metric{Metric: m, Quantile: "p50", Method: MethodHodgesLehmann, Pairs: len(base), Needs: stats.MinSamples(0.5) * rounds, Tolerance: tol}
	d := logRatios(base, cand)
	y, v := make([]float64, rounds), make([]float64, rounds)
	bounded := rounds >= 2
	for k, idx := range byRound(strata, rounds) {
		dk := make([]float64, len(idx))
		for j, i := range idx {
			dk[j] = d[i]
		}
		if len(dk) == 0 {
			out.Rounds, bounded = append(out.Rounds, nil), false
			continue
		}
		s := stats.PairedShift(dk)
		y[k], v[k] = s.Estimate, math.Pow(stats.SEOf(s.Lower, s.Upper), 2)
		bounded = bounded && s.Bounded
		out.Rounds = append(out.Rounds, ratioOf(s.Estimate))
	}
	if len(d) == 0 {
		out.Verdict = TooFew
		return out
	}
	out.Estimate = ratioOf(stats.PairedShift(d).Estimate)
	if !bounded || !out.pooled(y, v, math.Log1p(tol), math.Exp) {
		out.Verdict = TooFew
	}
	return out
}

// TailRatio compares the q-quantile of metric m: each round's ratio of the
// candidate's q-quantile to the baseline's, with its variance from a
// paired bootstrap within the round, pooled over the rounds; too few while
// a round has fewer pairs than stats.MinSamples(q).
func TailRatio(m string, q float64, base, cand []float64, strata []int, rounds int, tol float64) Metric {
	name := "p" + strconv.FormatFloat(math.Round(q*1000)/10, 'g', -1, 64)
	need := stats.MinSamples(q)
	out := Metric{Metric: m, Quantile: name, Method: MethodQuantileRatio, Pairs: len(base), Needs: need * rounds, Tolerance: tol}
	y, v := make([]float64, rounds), make([]float64, rounds)
	bounded := rounds >= 2
	for k, idx := range byRound(strata, rounds) {
		b, c := make([]float64, len(idx)), make([]float64, len(idx))
		for j, i := range idx {
			b[j], c[j] = base[i], cand[i]
		}
		if len(b) == 0 {
			out.Rounds, bounded = append(out.Rounds, nil), false
			continue
		}
		y[k] = math.Log(quantileRatio(b, c, q))
		out.Rounds = append(out.Rounds, ratioOf(y[k]))
		if len(b) < need {
			bounded = false
			continue
		}
		_, lo, hi, ok := stats.QuantileRatio(b, c, nil, q)
		bounded = bounded && ok && lo > 0
		if ok && lo > 0 {
			v[k] = math.Pow(stats.SEOf(math.Log(lo), math.Log(hi)), 2)
		}
	}
	if len(base) == 0 {
		out.Verdict = TooFew
		return out
	}
	out.Estimate = ratioOf(math.Log(quantileRatio(base, cand, q)))
	if !bounded || !out.pooled(y, v, math.Log1p(tol), math.Exp) {
		out.Verdict = TooFew
	}
	return out
}

// Goodput compares the share of good requests: good[k] of judged[k] per
// round k, baseline [0] and candidate [1]; each round's difference (the
// candidate's share minus the baseline's), pooled over the rounds. A
// round's variance is the binomial one at each side's share over all
// rounds, with one good and one bad request added (Agresti–Caffo), so that
// rounds without a bad request still carry their sampling error. The
// tolerance is in points, absolute.
func Goodput(good, judged [][2]int, tol float64) Metric {
	out := Metric{Metric: "goodput", Method: MethodAgrestiCaffo, Needs: 1, Tolerance: tol}
	var g, n [2]int
	for k := range good {
		for s := range 2 {
			g[s], n[s] = g[s]+good[k][s], n[s]+judged[k][s]
		}
	}
	var share [2]float64
	for s := range 2 {
		share[s] = float64(g[s]+1) / float64(n[s]+2)
	}
	y, v := make([]float64, len(good)), make([]float64, len(good))
	bounded := len(good) >= 2
	for k := range good {
		if judged[k][0] == 0 || judged[k][1] == 0 {
			out.Rounds, bounded = append(out.Rounds, nil), false
			continue
		}
		d := float64(good[k][1])/float64(judged[k][1]) - float64(good[k][0])/float64(judged[k][0])
		out.Rounds = append(out.Rounds, &d)
		y[k] = -d // above 0 is worse
		for s := range 2 {
			v[k] += share[s] * (1 - share[s]) / float64(judged[k][s])
		}
	}
	out.Pairs = min(n[0], n[1])
	if !bounded || !out.pooled(y, v, tol, func(x float64) float64 { return -x }) {
		out.Verdict = TooFew
	}
	return out
}

// Overall is the comparison's verdict, from its metrics, the pairs they
// rest on and each side's runs, on the judged metrics only: not measured
// without pairs; worse if any is worse; not enough evidence if any is not
// enough or too few; better if any is better and the answers are not
// significantly worse; within tolerance otherwise. The reasons say what
// would settle it. A saturated client counts pair by pair, in each
// latency's verdict (WithoutOwnDelay), not here.
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
	count, latencies := map[Verdict]int{}, 0
	for _, m := range metrics {
		if !m.Judged {
			continue
		}
		count[m.Verdict]++
		if !m.IsShare() && m.Verdict != TooFew && m.Verdict != NotApplicable {
			latencies++
		}
		if why := m.Unsettled(); why != "" {
			reasons = append(reasons, why)
		}
	}
	switch {
	case count[Worse] > 0:
		return Worse, reasons
	case count[NotEnough]+count[TooFew] > 0:
		return NotEnough, reasons
	case latencies == 0:
		return NotEnough, append(reasons, fmt.Sprintf("%d pairs are too few for any latency", pairs))
	case count[Better] > 0 && slices.ContainsFunc(metrics, Metric.SignificantlyWorse):
		// Faster output may be worse output: never better with worse answers.
		return Within, append(reasons, "its answers passed their checks significantly less often (within the quality tolerance): a faster candidate with worse answers is not better")
	case count[Better] > 0:
		return Better, reasons
	}
	return Within, reasons
}

// Unsettled says why a judged metric left the comparison without a
// verdict, and what would settle it; empty when it has one.
func (m Metric) Unsettled() string {
	switch m.Verdict {
	case TooFew:
		if m.PerRound() {
			return fmt.Sprintf("%s: too few pairs (%d, needs %d, at least %d in each round)", m.Name(), m.Pairs, m.Needs, m.Needs/len(m.Rounds))
		}
		return fmt.Sprintf("%s: too few pairs (%d, needs %d)", m.Name(), m.Pairs, m.Needs)
	case NotEnough:
		if m.OwnDelayDecides && m.WithoutOwnDelay != nil {
			return fmt.Sprintf("%s: llmprobe's own delay could change it: taken off each pair, the interval could reach from %.3f to %.3f", m.Name(), m.WithoutOwnDelay[0], m.WithoutOwnDelay[1])
		}
		tol := fmt.Sprintf("%g %%", 100*m.Tolerance)
		if m.IsShare() {
			tol = fmt.Sprintf("%g pp", 100*m.Tolerance)
		}
		if m.SettlePairs > 0 {
			return fmt.Sprintf("%s: the interval reaches across the %s tolerance; about %d pairs checked on both sides would settle it", m.Name(), tol, m.SettlePairs)
		}
		if m.SettleRounds > 0 {
			return fmt.Sprintf("%s: the interval reaches across the %s tolerance; %d rounds at this spread would settle it (--rounds=%d)", m.Name(), tol, m.SettleRounds, m.SettleRounds+m.SettleRounds%2)
		}
		return fmt.Sprintf("%s: the interval reaches across the %s tolerance and the estimate sits at it: no number of rounds up to %d would settle it", m.Name(), tol, maxSettleRounds)
	}
	return ""
}

// PerRound reports whether m's figure is estimated within each round, so
// that its Needs is spread over them.
func (m Metric) PerRound() bool {
	return (m.Method == MethodHodgesLehmann || m.Method == MethodQuantileRatio) && len(m.Rounds) > 0
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

// Tolerance is the burst's max_regression for metric at quantile (for
// goodput, its max_drop), else DefaultTolerance (GoodputTolerance); named
// says whether max_regression names it.
func Tolerance(b config.Burst, metric, quantile string) (tol float64, named bool) {
	for _, r := range b.MaxRegression {
		switch {
		case r.Metric == config.Goodput && metric == config.Goodput:
			return r.MaxDrop, true
		case r.Metric == metric && r.Quantile == quantile:
			return r.MaxIncrease, true
		}
	}
	if metric == config.Goodput {
		return GoodputTolerance, false
	}
	return DefaultTolerance, false
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
