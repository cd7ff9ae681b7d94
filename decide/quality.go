package decide

import (
	"math"

	"github.com/llmprobe/llmprobe/stats"
)

// MethodMcNemar is the quality metric's method: McNemar's exact test on
// the discordant pairs, with Newcombe's paired interval.
const MethodMcNemar = "mcnemar"

// QualityTolerance is the drop in the share of answers passing their
// checks that a quality verdict needs besides significance: 2 percentage
// points. Absolute, for shares near 1: 10 % of a 95 % pass rate would let
// a candidate lose 9.5 points.
const QualityTolerance = 0.02

// mcnemarMin is the fewest discordant pairs, all one way, that McNemar's
// exact test finds significant: 2 × 0.5⁶ ≈ 0.031.
const mcnemarMin = 6

// Quality compares the share of answers that passed their checks, request
// by request (the same golden line went to both sides): the candidate's
// share minus the baseline's with Newcombe's paired interval over all
// pairs, judged by Rule against tol in points, McNemar's exact p on the
// discordant pairs beside it. An answer's checks read its content, which
// the round's conditions do not change, so the pairs are the replicates.
func Quality(passed [][2]bool, strata []int, rounds int, tol float64) Metric {
	out := Metric{Metric: "quality", Method: MethodMcNemar, Pairs: len(passed), Needs: int(math.Ceil(mcnemarMin / tol)), Tolerance: tol}
	for k := range rounds {
		var in [][2]bool
		for i, s := range strata {
			if s == k {
				in = append(in, passed[i])
			}
		}
		if d, _, _, ok := stats.PairedProportionDiff(table(in)); ok {
			out.Rounds = append(out.Rounds, &d)
		} else {
			out.Rounds = append(out.Rounds, nil)
		}
	}
	a, b, c, d := table(passed)
	diff, lo, hi, ok := stats.PairedProportionDiff(a, b, c, d)
	if !ok {
		out.Verdict = TooFew
		return out
	}
	p := stats.McNemar(b, c)
	out.Estimate, out.Lower, out.Upper, out.P = &diff, &lo, &hi, &p
	out.Verdict = Rule(-hi, -lo, tol)
	if out.Verdict == NotEnough {
		// The interval narrows as 1/√pairs.
		if gap := math.Abs(diff + tol); gap > 0 {
			out.SettlePairs = int(math.Ceil(float64(len(passed)) * math.Pow((hi-lo)/2/gap, 2)))
		}
	}
	return out
}

// SignificantlyWorse reports whether m, the quality metric, found the
// candidate's answers worse at 95 % confidence, within its tolerance or not.
func (m Metric) SignificantlyWorse() bool {
	return m.Metric == "quality" && m.P != nil && *m.P < 1-stats.Confidence && m.Upper != nil && *m.Upper < 0
}

// table counts the pairs: a passed on both sides, b on the baseline only,
// c on the candidate only, d on neither.
func table(passed [][2]bool) (a, b, c, d int) {
	for _, p := range passed {
		switch {
		case p[0] && p[1]:
			a++
		case p[0]:
			b++
		case p[1]:
			c++
		default:
			d++
		}
	}
	return a, b, c, d
}
