package decide

import (
	"math"

	"github.com/llmprobe/llmprobe/stats"
)

// MinHistory is how many comparable stored runs a max_regression gate
// reads its figure's run-to-run spread from, at the least: below it, t's
// few degrees of freedom say little, and the gate's spread is assumed.
const MinHistory = 5

// Evidence is what a max_regression gate judges: the run's Effect against
// its baseline, signed so that above 0 is worse (a latency's log ratio,
// goodput's drop in points), its standard error SE with DF degrees of
// freedom (0: normal), and Runs, the runs a side behind it (1 without
// repeat). Low and High are the effect's extremes once llmprobe's own
// delay is taken off each request: Low with it off the run, High with it
// off the baseline (both Effect where none was added).
type Evidence struct {
	Effect, SE float64
	DF, Runs   int
	Low, High  float64
}

// RegressionVerdict is a max_regression gate's verdict: the 95 % interval
// of the effect as measured, how many runs a side would settle it when it
// had not enough evidence (0: none up to 100), and whether llmprobe's own
// delay alone kept it from a verdict.
type RegressionVerdict struct {
	Verdict         Verdict
	Lo, Hi          float64
	SettleRuns      int
	OwnDelayDecides bool
}

// Regression judges a max_regression gate by Rule: the evidence's 95 %
// interval against margin, on the effect's scale. Worse fails the gate;
// within or better passes it; not enough evidence leaves it undecided. As
// in a comparison, llmprobe's own delay neither hides a regression larger
// than what it could add nor invents one: worse only when the effect
// without it in the run is worse, within only when the effect without it
// in the baseline is; else not enough evidence, which the delay decides
// when the effect as measured had a verdict.
func Regression(e Evidence, margin float64) RegressionVerdict {
	q := stats.TQuantile(e.DF)
	judge := func(y float64) Verdict { return Rule(y-q*e.SE, y+q*e.SE, margin) }
	out := RegressionVerdict{Verdict: judge(e.Effect), Lo: e.Effect - q*e.SE, Hi: e.Effect + q*e.SE}
	// Low ≤ Effect ≤ High: the verdict as measured stands when the
	// extreme on its side agrees.
	low, high := judge(e.Low), judge(e.High)
	if out.Verdict != NotEnough && low != Worse && high != Within && high != Better {
		out.Verdict, out.OwnDelayDecides = NotEnough, true
	}
	if out.Verdict == NotEnough && !out.OwnDelayDecides {
		// n runs a side shrink the standard error by √(n/runs).
		out.SettleRuns = stats.RoundsToSettle(e.Effect, e.SE, max(e.Runs, 1), margin, maxSettleRounds)
	}
	return out
}

// Apply gives gate g the verdict: passed when within (or better), failed
// when worse, undecided when not enough evidence.
func (v RegressionVerdict) Apply(g *Gate) {
	g.Passed = v.Verdict == Within || v.Verdict == Better
	g.Undecided = v.Verdict == NotEnough && !v.OwnDelayDecides
	g.OwnDelayDecides = v.OwnDelayDecides
}

// LogSE is the standard error of a latency figure's log from its 95 %
// interval [lo, hi] (order statistics): its sampling error within one run.
func LogSE(lo, hi float64) float64 {
	if lo <= 0 || hi <= lo {
		return 0
	}
	return stats.SEOf(math.Log(lo), math.Log(hi))
}

// NotGated is the verdict on a percentile too few samples bound: shown,
// never judged, since its interval would not even bound it.
func NotGated() Verdict { return TooFew }
