package main

import (
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/stats"
)

// sweptReport is a stored sweep's report: its steps, knee, capacity and
// cost, as `llmprobe serve` brings it back at start.
func sweptReport() *report.Report {
	step := func(rate, ttft float64, passed bool) report.SweepStep {
		return report.SweepStep{Rate: rate, Passed: passed, Throughput: report.Throughput{OutputTokens: ptrTo(8 * rate)},
			Latency: map[string]stats.Summary{"ttft": {Count: 40, P50: ttft, P99: 2 * ttft}, "tpot": {Count: 40, P50: 0.02, P99: 0.03}}}
	}
	plan := report.SizeFleet(config.Capacity{TargetRate: 100}, 1, 0, false, ptrTo(8.0), 2)
	return &report.Report{ID: "swept-20200101T000000Z", Burst: "swept", Target: "sim", Model: "sim-model", MaxRateUnderSLO: ptrTo(1.0),
		Latency: map[string]stats.Summary{"ttft": {Count: 1, P50: 0.1, P99: 0.1}},
		Sweep:   []report.SweepStep{step(1, 0.05, true), step(2, 0.8, false)},
		Knee:    &report.Knee{Passing: ptrTo(1.0), Failing: ptrTo(2.0), Capacity: &plan, Cost: report.PriceAt(5, ptrTo(8.0), ptrTo(40.0))}}
}
