package daemon

import (
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/stats"
)

// sweptReport is a sweep's report with its curve, knee, capacity and cost,
// for the metric contract.
func sweptReport() *report.Report {
	f := func(v float64) *float64 { return &v }
	plan := report.SizeFleet(config.Capacity{TargetRate: 100}, 10, 0, false, f(100), 1)
	return &report.Report{Burst: "swept", MaxRateUnderSLO: f(10),
		Sweep: []report.SweepStep{{Rate: 10, Passed: true, Throughput: report.Throughput{OutputTokens: f(100)},
			Latency: map[string]stats.Summary{"ttft": {Count: 40, P50: 0.02, P99: 0.04}}}},
		Knee: &report.Knee{Passing: f(10), Failing: f(12), Capacity: &plan, Cost: report.PriceAt(5, f(100), f(400))}}
}
