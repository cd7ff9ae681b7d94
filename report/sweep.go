package report

import (
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/config/workload"
	"github.com/llmprobe/llmprobe/stats"
)

// Sweep gathers the steps of a rate sweep, decides whether each held the
// SLO, and makes the sweep's report from the highest step that did.
type Sweep struct {
	burst   config.Burst
	meta    Meta
	target  float64
	steps   []SweepStep
	reports []*Report
	tokens  int
}

// NewSweep starts an empty sweep of b.
func NewSweep(b config.Burst, meta Meta) *Sweep {
	return &Sweep{burst: b, meta: meta, target: sweepTarget(b, meta.Scenarios)}
}

// Add records one step and reports whether it held the SLO: it ran to its
// end, measured requests, and its goodput ratio reached the target. The
// first step that did not ends the sweep: the knee is found.
func (s *Sweep) Add(run Run) bool {
	rep := Build(s.burst, run, s.meta)
	s.tokens += rep.AllOutputTokens
	passed := !rep.Aborted && rep.Goodput.Ratio != nil && *rep.Goodput.Ratio >= s.target
	s.steps = append(s.steps, SweepStep{Rate: run.Rate, AchievedRate: rep.AchievedRate, GoodputRatio: rep.Goodput.Ratio, TTFTP99: rep.Latency["ttft"].Measured("p99"), Passed: passed,
		ErrorBoundP99: rep.ErrorBound.P99, ErrorBoundMax: rep.ErrorBound.Max, ClientSaturated: rep.ClientSaturated})
	s.reports = append(s.reports, rep)
	return passed
}

// Report is the highest passing step's report, carrying every step and the
// rate it held as max_rate_under_slo; with no step passing, the first
// step's. Its error bound is the worst of every step's, and its client was
// saturated if any step's was: the knee rests on every step. verdict.Judge
// gives its verdict.
func (s *Sweep) Report() *Report {
	best := -1
	for i, st := range s.steps {
		if st.Passed {
			best = i
		}
	}
	var rep *Report
	switch {
	case best >= 0:
		rep = s.reports[best]
		rate := s.steps[best].Rate
		rep.MaxRateUnderSLO = &rate
	case len(s.reports) > 0:
		rep = s.reports[0]
	default:
		rep = Build(s.burst, Run{Start: time.Now(), Aborted: true, AbortReason: "cancelled before the first step"}, s.meta)
	}
	rep.Sweep = s.steps
	rep.AllOutputTokens = s.tokens
	if len(s.reports) > 0 {
		var worst *stats.ErrorBound
		for _, step := range s.reports {
			worst = stats.WorseBound(worst, step.ErrorBound)
			rep.ClientSaturated = rep.ClientSaturated || step.ClientSaturated
		}
		rep.ErrorBound = worst
	}
	return rep
}

// sweepTarget is the goodput ratio a step must reach: auto's target_ratio,
// else the strictest target ratio among the burst's scenarios.
func sweepTarget(b config.Burst, scenarios []workload.Scenario) float64 {
	if b.Sweep != nil && b.Sweep.Auto != nil && b.Sweep.Auto.TargetRatio > 0 {
		return b.Sweep.Auto.TargetRatio
	}
	t := 0.0
	for _, s := range scenarios {
		if len(s.SLO.Objectives()) > 0 {
			t = max(t, s.SLO.TargetRatio)
		}
	}
	return t
}
