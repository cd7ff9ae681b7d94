package report

import (
	"github.com/llmprobe/llmprobe/capacity"
	"github.com/llmprobe/llmprobe/prober"
)

// SweepStep is one rate of a sweep, with the figures its own report had:
// together the steps are the QPS–latency curve.
type SweepStep struct {
	Rate         float64  `json:"rate"`
	AchievedRate *float64 `json:"achieved_rate"`
	GoodputRatio *float64 `json:"goodput_ratio"`
	TTFTP99      *float64 `json:"ttft_p99"`
	// Passed: the step ran to its end and the lower bound of its goodput
	// ratio's 95 % interval reached the target ratio.
	Passed bool `json:"passed"`
	// The step's own error bound and saturation verdict (null in older reports).
	ErrorBoundP99   *float64 `json:"error_bound_p99"`
	ErrorBoundMax   *float64 `json:"error_bound_max"`
	ClientSaturated bool     `json:"client_saturated"`

	// Bisect marks a step auto ran between a passing and a failing rate.
	Bisect bool `json:"bisect,omitempty"`
	// Good of Judged requests were good (cancelled ones are not judged);
	// GoodputLower and GoodputUpper bound the ratio (Wilson, 95 %).
	Good         int                    `json:"good"`
	Judged       int                    `json:"judged"`
	GoodputLower *float64               `json:"goodput_lower"`
	GoodputUpper *float64               `json:"goodput_upper"`
	Requests     int                    `json:"requests"`
	Planned      int                    `json:"planned_requests"`
	Outcomes     map[prober.Outcome]int `json:"outcomes"`
	Aborted      bool                   `json:"aborted,omitempty"`
	Latency      map[string]Summary     `json:"latency"`
	Throughput   Throughput             `json:"throughput"`
	// Cost prices the step's achieved output, where cost: is configured.
	Cost *capacity.Price `json:"cost,omitempty"`
}

// Knee is what a sweep found: the highest rate that held the SLO and the
// lowest above it that did not, so the maximum lies in [Passing, Failing);
// with no failing step, it is at least Passing.
type Knee struct {
	TargetRatio float64  `json:"target_ratio"`
	Passing     *float64 `json:"passing"`
	Failing     *float64 `json:"failing"`
	// Resolution is how close auto's bisection brings the two (0: a list
	// of rates, not bisected).
	Resolution float64 `json:"resolution,omitempty"`
	// Objectives are the tightest latency objectives of the burst's
	// scenarios, in seconds by metric: the curve's SLO lines.
	Objectives map[string]float64 `json:"objectives,omitempty"`
	// Capacity and Cost are at Passing, where capacity: and cost: are set.
	Capacity *capacity.Plan  `json:"capacity,omitempty"`
	Cost     *capacity.Price `json:"cost,omitempty"`
	// Why says why Capacity or Cost could not be given.
	Why string `json:"why,omitempty"`
}
