package report

import (
	"fmt"
	"strings"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/lib/figure"
	"github.com/llmprobe/llmprobe/stats"
)

// Verdict is a report's verdict in one word and why: a failure's failing
// checks, or the caveat a saturated client puts on the verdict.
type Verdict struct {
	Word   decide.Verdict
	Reason string
}

// VerdictOf says r's verdict (decide.BurstVerdict). Reports judged before
// the verdict had a word are read from their fields the same way.
func VerdictOf(r *Report) Verdict {
	word, why := decide.BurstVerdict(decide.BurstFacts{
		Verdict: r.Verdict, VerdictReason: r.VerdictReason, Requests: r.Requests, Passed: r.Passed, Aborted: r.Aborted,
		ClientSaturated: r.ClientSaturated, AddedUpTo: addedUpTo(r), OwnDelayOnly: ownDelayOnly(r), Undecided: undecided(r), Judged: judged(r), BaselineRefused: Refused(r) != "", AnswersFailed: answersFailed(r),
		Held: held(r), Failing: failingChecks(r), Throttled: throttledCaveat(r),
	})
	return Verdict{word, why}
}

// ownDelayOnly reports whether every check that failed r may have failed
// by llmprobe's own delay alone: an SLO gate whose misses within that delay
// could pass it, or a regression gate whose figure without that delay
// could (OwnDelayDecides). An abort or a sweep that held at no rate is the
// target's.
func ownDelayOnly(r *Report) bool {
	if r.Aborted || (r.Sweep != nil && r.MaxRateUnderSLO == nil) {
		return false
	}
	failed := 0
	for _, g := range r.Gates {
		if g.Passed || g.Skipped {
			continue
		}
		failed++
		if g.Undecided || (g.OwnDelay == 0 && !g.OwnDelayDecides) {
			return false
		}
	}
	return failed > 0
}

// undecided reports whether r failed no check for certain and a gate had
// not enough evidence: an abort, a sweep that held at no rate or a certain
// failure decide it; misses within llmprobe's own delay do not.
func undecided(r *Report) bool {
	if r.Aborted || (r.Sweep != nil && r.MaxRateUnderSLO == nil) {
		return false
	}
	some := false
	for _, g := range r.Gates {
		switch {
		case g.Passed || g.Skipped:
		case g.Undecided:
			some = true
		case g.OwnDelay > 0 || g.OwnDelayDecides:
		default:
			return false
		}
	}
	return some
}

// judged counts r's gates that were judged: not skipped. A sweep judges
// its steps.
func judged(r *Report) int {
	n := 0
	for _, g := range r.Gates {
		if !g.Skipped {
			n++
		}
	}
	if r.Sweep != nil || r.Shard != nil {
		n++ // a sweep judges its steps; a shard's merged report judges it
	}
	return n
}

// answersFailed reports whether r failed its quality gate: answers that
// fail their checks are the target's, however late the client was.
func answersFailed(r *Report) bool {
	for _, g := range r.Gates {
		if g.Name == "slo_"+config.ObjectiveQuality && !g.Passed && !g.Skipped {
			return true
		}
	}
	return false
}

// Line is the verdict as a sentence's head: "passed", "passed (caveat)",
// "FAILED — why", "inconclusive — why".
func (o Verdict) Line() string {
	switch {
	case o.Reason == "":
		return string(o.Word)
	case o.Word == decide.Passed:
		return string(o.Word) + " (" + o.Reason + ")"
	case o.Word == decide.Failed:
		return "FAILED — " + o.Reason
	}
	return string(o.Word) + " — " + o.Reason
}

// held says which gates a passed run held: "4 gates held, 1 skipped".
func held(r *Report) string {
	var passed, skipped int
	for _, g := range r.Gates {
		switch {
		case g.Skipped:
			skipped++
		case g.Passed:
			passed++
		}
	}
	out := fmt.Sprintf("%d gates held", passed)
	if passed == 1 {
		out = "1 gate held"
	}
	if skipped > 0 {
		out += fmt.Sprintf(", %d skipped", skipped)
	}
	return out
}

// failingChecks names what failed the run, shortly: "slo_ttft 97.2% < 99%".
func failingChecks(r *Report) []string {
	var out []string
	if r.Aborted {
		out = append(out, "aborted: "+r.AbortReason)
	}
	for _, g := range r.Gates {
		switch {
		case g.Passed || g.Skipped:
		case g.Value == nil || !strings.HasPrefix(g.Name, "slo_") && !strings.HasPrefix(g.Name, "regression_"):
			out = append(out, g.Name+": "+g.Detail)
		case g.Undecided:
			value, limit, _ := gateFigures(g)
			out = append(out, fmt.Sprintf("%s %s, its interval across %s", g.Name, value, limit))
		case g.OwnDelayDecides:
			value, limit, _ := gateFigures(g)
			out = append(out, fmt.Sprintf("%s %s, on either side of %s once llmprobe's own delay is taken off", g.Name, value, limit))
		default:
			value, limit, beyond := gateFigures(g)
			out = append(out, fmt.Sprintf("%s %s %s %s", g.Name, value, beyond, limit))
		}
	}
	if r.Sweep != nil && r.MaxRateUnderSLO == nil {
		out = append(out, fmt.Sprintf("no rate of the %d-step sweep held the SLO", len(r.Sweep)))
	}
	if len(out) == 0 {
		out = append(out, "a check failed")
	}
	return out
}

// gateFigures prints a gate's value and limit as its failure says them,
// and the side a failed value lies on: "97.2%" "99%" "<" for a share,
// "+35.0%" "+20%" ">" for a latency's change, "-8.8 pp" "-2 pp" "<" for
// goodput's.
func gateFigures(g decide.Gate) (value, limit, beyond string) {
	switch {
	case g.Name == "regression_"+config.Goodput:
		return fmt.Sprintf("%+.1f pp", 100**g.Value), fmt.Sprintf("-%g pp", 100*g.Threshold), "<"
	case strings.HasPrefix(g.Name, "regression_"):
		return fmt.Sprintf("%+.1f%%", 100**g.Value), fmt.Sprintf("+%g%%", 100*g.Threshold), ">"
	}
	return fmt.Sprintf("%.1f%%", 100**g.Value), fmt.Sprintf("%g%%", 100*g.Threshold), "<"
}

// addedUpTo is the most the client added to one request: the error
// bound's maximum, or its p99 where that is all there is.
func addedUpTo(r *Report) string {
	e := r.ErrorBound
	if e == nil {
		return "n/a"
	}
	if e.Max != nil {
		return ms(e.Max)
	}
	if e.P99 != nil {
		return ms(e.P99)
	}
	return ms(e.DispatchDelay.Max)
}

// throttledCaveat says how long llmprobe's CPU quota held it off its CPUs
// during the run, "" where it did not or no cgroup said.
func throttledCaveat(r *Report) string {
	t := Throttled(r)
	if t == nil || t.Seconds <= 0 {
		return ""
	}
	return fmt.Sprintf("llmprobe was throttled for %s during the run (its CPU quota, in %d periods)", figure.Ms(t.Seconds), t.Periods)
}

// Throttled is r's CPU throttling, nil (n/a) where no cgroup was read.
func Throttled(r *Report) *stats.Throttling {
	if e := r.ErrorBound; e != nil && e.Runtime != nil {
		return e.Runtime.Throttled
	}
	return nil
}

func ms(seconds *float64) string {
	if seconds == nil {
		return "n/a"
	}
	return figure.Ms(*seconds)
}
