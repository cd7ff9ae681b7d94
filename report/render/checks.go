package render

import (
	"fmt"

	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/report"
)

// Status of one check of a run.
type Status string

const (
	StatusPassed  Status = "passed"
	StatusFailed  Status = "failed"  // the target was measured and missed
	StatusSkipped Status = "skipped" // could not be judged; does not fail the run
	StatusWarning Status = "warning" // does not fail the run, but casts doubt on it
	StatusError   Status = "error"   // the target could not be measured, or the report not kept
)

// Check is one verdict of a run, as CI systems list them: a gate, or a
// condition of the whole run.
type Check struct {
	Name   string
	Status Status
	Detail string
}

// Checks lists every verdict behind Passed: the run measured requests and
// ran to its end (the brake did not stop it), each gate, the sweep's knee,
// and, as warnings, a saturated client and an upgrade run's regression. A
// check fails exactly where Judge failed the run.
func Checks(r *report.Report) []Check {
	var out []Check
	if r.Requests == 0 {
		out = append(out, Check{"measured", StatusFailed, fmt.Sprintf("no request was measured (%d planned)", r.PlannedRequests)})
	} else {
		out = append(out, Check{"measured", StatusPassed, fmt.Sprintf("%d of %d planned requests sent", r.Requests, r.PlannedRequests)})
	}
	if r.Aborted {
		out = append(out, Check{"completed", StatusFailed, "aborted: " + r.AbortReason})
	} else {
		out = append(out, Check{"completed", StatusPassed, "ran to its end"})
	}
	for _, g := range r.Gates {
		st := StatusPassed
		switch {
		case g.Skipped:
			st = StatusSkipped
		case g.Undecided:
			st = StatusError // not enough evidence: no verdict on the target
		case !g.Passed && inconclusive(r):
			st = StatusError // a saturated client's figures are not the target's
		case !g.Passed:
			st = StatusFailed
		}
		out = append(out, Check{g.Name, st, g.Detail})
	}
	if r.Sweep != nil {
		if r.MaxRateUnderSLO != nil {
			out = append(out, Check{"sweep", StatusPassed, fmt.Sprintf("held the SLO up to %.2f/s (%s)", *r.MaxRateUnderSLO, steps(len(r.Sweep)))})
		} else {
			out = append(out, Check{"sweep", StatusFailed, fmt.Sprintf("no step held the SLO (%s)", steps(len(r.Sweep)))})
		}
		out = append(out, planChecks(r)...)
	}
	if u := r.Upgrade; u != nil {
		st := StatusPassed
		switch {
		case u.BaselineID == "":
			st = StatusSkipped
		case u.Regressed:
			st = StatusWarning
		}
		out = append(out, Check{"upgrade", st, u.Summary})
	}
	switch {
	case inconclusive(r) && r.ClientSaturated:
		out = append(out, Check{"client_saturation", StatusError, saturationDetail(r) + ": " + saturationConsequence(r)})
	case r.ClientSaturated:
		out = append(out, Check{"client_saturation", StatusWarning, saturationDetail(r) + ": " + saturationConsequence(r)})
	default:
		out = append(out, Check{"client_saturation", StatusPassed, saturationDetail(r) + ": the prober kept up"})
	}
	return out
}

// saturationConsequence says what a saturated client means for r's
// verdict: a pass holds (the client only adds delay), a failure whose
// misses are within its delay is inconclusive, and one whose misses are
// larger is the target's.
func saturationConsequence(r *report.Report) string {
	switch o := report.VerdictOf(r); o.Word {
	case decide.Inconclusive:
		return "inconclusive: " + o.Reason
	case decide.Passed:
		return "the pass holds, since llmprobe only adds delay: " + o.Reason
	default:
		return "its latencies include llmprobe's own delay, up to the bound; the failure holds, since its misses are larger, request by request"
	}
}

// inconclusive says r failed only by misses within llmprobe's own delay:
// its failing gates are not certainly the target's.
func inconclusive(r *report.Report) bool {
	return report.VerdictOf(r).Word == decide.Inconclusive
}
