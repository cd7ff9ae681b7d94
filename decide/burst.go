package decide

import (
	"fmt"
	"strings"
)

// A burst's verdict in one word, as every surface prints it; Inconclusive
// and NotMeasured are a comparison's words too.
const (
	Passed Verdict = "passed"
	Failed Verdict = "failed"
	// NothingJudged: the burst measured requests and had no gate to judge
	// them by, so it claims nothing of the target.
	NothingJudged Verdict = "measured, nothing judged"
)

// SignificanceLevel is the p-value under which a change counts as real.
const SignificanceLevel = 0.05

// Significant reports whether a test's p-value shows a real change.
func Significant(p float64) bool { return p < SignificanceLevel }

// UpgradeRegression is an engine upgrade's rule for one figure: its
// verdict by Regression is worse.
func UpgradeRegression(v RegressionVerdict) bool { return v.Verdict == Worse }

// NotJudged marks g as shown but not judged, why being what judges it
// instead: a shard's share is judged in the merged report.
func NotJudged(g *Gate, why string) {
	if g.Skipped {
		return
	}
	g.Passed, g.Skipped = true, true
	g.Detail = fmt.Sprintf("%s: %s", why, g.Detail)
}

// Skipped is a gate that could not be judged, and why: it passes, marked
// skipped.
func Skipped(name string, threshold float64, why string) Gate {
	return Gate{Name: name, Threshold: threshold, Passed: true, Skipped: true, Detail: why}
}

// Refused is the gate a named baseline that cannot be used fails.
func Refused(name, why string) Gate { return Gate{Name: name, Detail: why} }

// BurstPassed is a burst's rule as a whole: it ran to its end, measured at
// least one request, passed every gate and, if it swept rates, held the
// SLO at one of them.
func BurstPassed(aborted bool, requests int, swept, held bool, gates []Gate) bool {
	passed := !aborted && requests > 0 && (!swept || held)
	for _, g := range gates {
		passed = passed && g.Passed
	}
	return passed
}

// BurstFacts are what a burst's verdict word rests on, as its report says.
type BurstFacts struct {
	// Verdict and VerdictReason: a verdict found before the report was
	// judged (the gate's not measured), kept.
	Verdict       Verdict
	VerdictReason string
	Requests      int
	Passed        bool
	Aborted       bool
	// ClientSaturated: llmprobe's own delays passed their limit;
	// AddedUpTo says how much they were at most.
	ClientSaturated bool
	AddedUpTo       string
	// OwnDelayOnly: every check that failed may have failed by llmprobe's
	// own delay alone (a failed SLO gate whose misses within that delay
	// could pass it; a failed regression under a saturated client).
	// Undecided: no check failed for certain and one had not enough
	// evidence. Judged counts the gates judged (not skipped).
	OwnDelayOnly, Undecided bool
	Judged                  int
	// BaselineRefused: a named baseline was refused. AnswersFailed: the
	// answers failed their checks, which no delay of the client explains.
	BaselineRefused, AnswersFailed bool
	// Held says which gates a passing run held; Failing what failed it.
	Held    string
	Failing []string
	// Throttled is the caveat of llmprobe's own CPU throttling during the
	// run, said after any verdict's reason; "" where it was not throttled.
	Throttled string
}

// BurstVerdict is a burst's verdict in one word and why. llmprobe's own
// delay only adds to a latency: a pass still holds (the target is at least
// this fast); a failure is inconclusive when llmprobe's own delay, request
// by request, could explain every failed check, and failed when a miss is
// certainly the target's or a check no delay touches failed. Without a
// certain failure, a gate with not enough evidence makes the verdict not
// enough evidence; a run with no gate judged says so. A throttled
// llmprobe says so after the reason.
func BurstVerdict(f BurstFacts) (Verdict, string) {
	word, why := burstVerdict(f)
	if f.Throttled != "" && word != NotMeasured {
		why += "; " + f.Throttled
	}
	return word, why
}

func burstVerdict(f BurstFacts) (Verdict, string) {
	switch {
	case f.Verdict == NotMeasured: // the gate's own finding, kept
		return NotMeasured, f.VerdictReason
	case f.Requests == 0:
		return NotMeasured, "no request was measured"
	case f.Passed && f.Judged == 0:
		return NothingJudged, "no gate judged the run: it set no SLO and no regression gate could be judged"
	case f.Passed && f.ClientSaturated:
		return Passed, fmt.Sprintf("llmprobe added up to %s; the target is at least this fast", f.AddedUpTo)
	case f.Passed:
		return Passed, f.Held
	case f.Undecided && !f.Aborted && !f.BaselineRefused && !f.AnswersFailed:
		return NotEnough, joinComma(f.Failing)
	case f.OwnDelayOnly && !f.Aborted && !f.BaselineRefused && !f.AnswersFailed:
		return Inconclusive, fmt.Sprintf("%s: within llmprobe's own delay (up to %s), which may decide it, not the target",
			joinComma(f.Failing), f.AddedUpTo)
	}
	return Failed, joinComma(f.Failing)
}

func joinComma(s []string) string { return strings.Join(s, ", ") }

// StepHeld is a sweep step's rule: it ran to its end and the lower bound of
// its goodput ratio's 95 % interval reached the target ratio (the one
// rule's pass; StepVerdict tells a miss from not enough evidence).
func StepHeld(aborted bool, goodputLower *float64, target float64) bool {
	return !aborted && goodputLower != nil && *goodputLower >= target-1e-12
}

// StepVerdict is a sweep step's verdict by the one rule: passed when it
// held (StepHeld), failed when its goodput ratio's interval lies below the
// target or it stopped early, not enough evidence when the interval
// reaches across. The sweep stops at the first that failed.
func StepVerdict(aborted bool, goodputLower, goodputUpper *float64, target float64) Verdict {
	switch {
	case StepHeld(aborted, goodputLower, target):
		return Passed
	case aborted || goodputUpper == nil || *goodputUpper < target-1e-12:
		return Failed
	}
	return NotEnough
}

// StepRead is a stored sweep step's verdict: the one it carries, or, in a
// report written before steps carried one, passed or failed.
func StepRead(v Verdict, passed bool) Verdict {
	switch {
	case v != "":
		return v
	case passed:
		return Passed
	}
	return Failed
}

// Step is a sweep step as its knee sees it: its rate and its verdict
// (StepVerdict).
type Step struct {
	Rate    float64
	Verdict Verdict
}

// Knee bounds a sweep's maximum rate under the SLO: the lowest rate shown
// to fail, and the highest below it shown to hold (nil: none). Steps with
// not enough evidence bound nothing: the knee may lie on either side of
// them, so they widen the interval instead of closing it.
func Knee(steps []Step) (passing, failing *float64) {
	for _, st := range steps {
		if st.Verdict == Failed && (failing == nil || st.Rate < *failing) {
			r := st.Rate
			failing = &r
		}
	}
	for _, st := range steps {
		if st.Verdict == Passed && (failing == nil || st.Rate < *failing) && (passing == nil || st.Rate > *passing) {
			r := st.Rate
			passing = &r
		}
	}
	return passing, failing
}

// UpgradeRegressed is an engine upgrade's verdict: a regression where any
// of its figures regressed.
func UpgradeRegressed(figures ...bool) bool {
	for _, r := range figures {
		if r {
			return true
		}
	}
	return false
}

// Unmeasured is the verdict on what could not be measured, and why: no
// verdict on the target, but not measured.
func Unmeasured(why string) (Verdict, string) { return NotMeasured, why }
