package decide

import (
	"math"
	"time"

	"github.com/llmprobe/llmprobe/stats"
)

// Decisions of an always-on comparison, the value of
// llmprobe_comparison_decision: what a rollout or an alert acts on.
const (
	DecisionFail      = -1
	DecisionUndecided = 0
	DecisionPass      = 1
)

// DailyErrorRate bounds the share of days on which an always-on
// comparison decides wrongly on one side: fails a candidate whose every
// median lies within the tolerance, or passes one with a median beyond it.
const DailyErrorRate = 0.05

// AnytimeMetrics is how many metrics an always-on comparison decides on
// (the medians of TTFT, TPOT, ITL and E2E): the day's error rate is split
// over them.
const AnytimeMetrics = 4

// EpochThreshold is the log e-value a metric's evidence must reach within
// an epoch of an always-on comparison with the given scenarios: the day's
// error rate split evenly over the epochs a day holds, the metrics and the
// scenarios (a union bound, so it holds however they depend on each other).
func EpochThreshold(epoch time.Duration, scenarios int) float64 {
	perDay := math.Max(1, float64(24*time.Hour)/float64(epoch))
	return math.Log(perDay * AnytimeMetrics * float64(max(1, scenarios)) / DailyErrorRate)
}

// SignCount is one metric's pairs of an epoch counted against the
// tolerance: how many log ratios lay above ln(1 + tolerance), how many below.
type SignCount struct{ Above, Below int }

// Add counts one pair's log ratio (candidate over baseline).
func (c *SignCount) Add(logRatio, tolerance float64) {
	margin := math.Log1p(tolerance)
	switch {
	case logRatio > margin:
		c.Above++
	case logRatio < margin:
		c.Below++
	} // on the margin: no evidence either way, as the sign test drops ties
}

// Anytime is one metric's decision from an epoch's pairs, valid however
// often it is looked at: fail when the evidence that its median ratio lies
// beyond 1 + tolerance reaches the threshold (stats.SignEvidence), pass
// when the evidence that it lies within does; undecided before minPairs
// pairs and while neither does. It is the one rule (Rule) on the median's
// confidence sequence (stats.MedianSequence) at that threshold: the
// sequence's lower end lies above the margin exactly when the first
// evidence reaches it, its upper end below exactly when the second does.
func Anytime(c SignCount, logThreshold float64, minPairs int) int {
	switch {
	case c.Above+c.Below < minPairs:
		return DecisionUndecided
	case stats.SignEvidence(c.Above, c.Below) >= logThreshold:
		return DecisionFail
	case stats.SignEvidence(c.Below, c.Above) >= logThreshold:
		return DecisionPass
	}
	return DecisionUndecided
}

// Combine is a comparison's decision from its metrics': fail when any
// failed, pass when every one passed, else undecided.
func Combine(metrics []int) int {
	out := DecisionPass
	for _, d := range metrics {
		switch d {
		case DecisionFail:
			return DecisionFail
		case DecisionUndecided:
			out = DecisionUndecided
		}
	}
	if len(metrics) == 0 {
		return DecisionUndecided
	}
	return out
}
