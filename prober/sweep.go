package prober

import (
	"context"
	"slices"

	"github.com/llmprobe/llmprobe/config"
)

// Run runs a burst, or its sweep, and builds the report. previous is the
// last report of the same burst, for the regression verdict.
func Run(ctx context.Context, run BurstRun, meta ReportMeta, previous *Report) *Report {
	b := run.Burst
	if b.Sweep == nil {
		run.Rate = b.Arrival.Rate
		return BuildReport(b, RunBurst(ctx, run), meta, previous)
	}
	target := sweepTarget(b, meta.Scenarios)
	var steps []SweepStep
	var reports []*Report
	allTokens := 0
	for _, rate := range sweepRates(b.Sweep) {
		if ctx.Err() != nil {
			break
		}
		run.Rate = rate
		rep := BuildReport(b, RunBurst(ctx, run), meta, nil)
		allTokens += rep.AllOutputTokens
		passed := !rep.Aborted && rep.Requests > 0 && rep.Goodput.Ratio >= target
		steps = append(steps, SweepStep{Rate: rate, AchievedRate: rep.AchievedRate, GoodputRatio: rep.Goodput.Ratio, TTFTP99: rep.Latency["ttft"].P99, Passed: passed})
		reports = append(reports, rep)
		if !passed {
			break // the first failing step ends an automatic or listed sweep: the knee is found
		}
	}
	// The report is the highest passing step's; a sweep with none passing reports its first step.
	best := -1
	for i, s := range steps {
		if s.Passed {
			best = i
		}
	}
	var rep *Report
	if best >= 0 {
		rep = reports[best]
		rate := steps[best].Rate
		rep.MaxRateUnderSLO = &rate
	} else if len(reports) > 0 {
		rep = reports[0]
		rep.Passed = false
	} else {
		run.Rate = b.Arrival.Rate
		rep = BuildReport(b, &BurstOutcome{Aborted: true, AbortReason: "cancelled before the first step"}, meta, nil)
	}
	rep.Sweep = steps
	rep.AllOutputTokens = allTokens
	if previous != nil {
		rep.regress(b, previous)
		for _, g := range rep.Gates {
			rep.Passed = rep.Passed && g.Passed
		}
	}
	return rep
}

func sweepRates(s *config.Sweep) []float64 {
	if len(s.Rates) > 0 {
		r := slices.Clone(s.Rates)
		slices.Sort(r)
		return r
	}
	var out []float64
	for r := s.Auto.Start; r <= s.Auto.Max+1e-9; r += s.Auto.Step {
		out = append(out, r)
	}
	return out
}

// sweepTarget is the goodput ratio a step must reach: auto's target_ratio,
// else the strictest target ratio among the burst's scenarios.
func sweepTarget(b config.Burst, scenarios []config.Scenario) float64 {
	if b.Sweep.Auto != nil && b.Sweep.Auto.TargetRatio > 0 {
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
