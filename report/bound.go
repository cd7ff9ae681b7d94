package report

import (
	"fmt"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/stats"
)

const (
	// saturationShare: the client is saturated when its own error passes
	// this share of the tightest objective.
	saturationShare = 0.1
	// fallbackObjective stands in for the tightest objective of a burst
	// whose scenarios set none: its tenth is the 5 ms llmprobe used before.
	fallbackObjective = 50 * time.Millisecond
)

// saturationLimit is the bound p99 above which a burst of these scenarios
// measured its client: a tenth of the tightest threshold among them (TTFT,
// TPOT, E2E and stall alike; for TPOT, an average over tokens, this is
// conservative), or of fallbackObjective where none is set. It also says
// which objective that is.
func saturationLimit(scenarios []config.Scenario) (time.Duration, string) {
	var tightest time.Duration
	var name string
	for _, s := range scenarios {
		for _, o := range s.SLO.Objectives() {
			if tightest == 0 || o.Threshold < tightest {
				tightest, name = o.Threshold, fmt.Sprintf("%s %s of scenario %s", o.Name, o.Threshold, s.Name)
			}
		}
	}
	if tightest == 0 {
		tightest, name = fallbackObjective, fmt.Sprintf("no objective is set: %s stands in", fallbackObjective)
	}
	return time.Duration(saturationShare * float64(tightest)), name
}

// newErrorBound is the bound of a run whose dispatch delay is dispatch and
// whose read side rt (nil: not sampled), against a tenth of the tightest
// objective of its scenarios.
func newErrorBound(dispatch stats.Summary, rt *stats.RuntimeDelays, scenarios []config.Scenario) *stats.ErrorBound {
	limit, objective := saturationLimit(scenarios)
	d := stats.Tail{Count: uint64(dispatch.Count)}
	if dispatch.Count > 0 {
		d.P99, d.Max = orNA(dispatch.P99, true), orNA(dispatch.Max, true)
	}
	return stats.NewErrorBound(d, rt, limit.Seconds(), objective)
}
