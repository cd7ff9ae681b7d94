package collector

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/stats"
)

// A sweep exports its curve step by step in offered-rate order, its
// failing rate, the fleet and the price; a burst without a sweep none of it.
func TestSweepCurveAndCapacity(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	step := func(rate, ttft float64, passed bool) report.SweepStep {
		return report.SweepStep{Rate: rate, Passed: passed, Throughput: report.Throughput{OutputTokens: f(10 * rate)},
			Latency: map[string]stats.Summary{"ttft": {Count: 40, P50: ttft, P99: 2 * ttft}}}
	}
	plan := report.SizeFleet(config.Capacity{TargetRate: 100, Headroom: 0.2}, 10, 0, false, f(100), 2)
	bursts := NewBursts()
	bursts.Finished(&report.Report{Burst: "swept", MaxRateUnderSLO: f(10),
		Sweep: []report.SweepStep{step(4, 0.02, true), step(12, 0.5, false), step(10, 0.04, true)},
		Knee:  &report.Knee{Passing: f(10), Failing: f(12), Capacity: &plan, Cost: report.PriceAt(5, f(100), f(400))}}, nil)
	bursts.Finished(&report.Report{Burst: "single"}, nil)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(bursts)

	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"llmprobe_burst_sweep_step_offered_rate", map[string]string{"burst": "swept", "step": "1"}, 10}, // the bisected 10 lies between 4 and 12
		{"llmprobe_burst_sweep_step_latency_seconds", map[string]string{"burst": "swept", "step": "2", "metric": "ttft", "percentile": "p99"}, 1},
		{"llmprobe_burst_sweep_step_passed", map[string]string{"burst": "swept", "step": "2"}, 0},
		{"llmprobe_burst_sweep_step_output_tokens_per_second", map[string]string{"burst": "swept", "step": "0"}, 40},
		{"llmprobe_burst_max_rate_failing", map[string]string{"burst": "swept"}, 12},
		{"llmprobe_burst_capacity_instances", map[string]string{"burst": "swept"}, 12},
		{"llmprobe_burst_capacity_gpus", map[string]string{"burst": "swept"}, 24},
		{"llmprobe_burst_cost_per_million_tokens", map[string]string{"burst": "swept", "tokens": "total"}, 5 / (3600 * 400.0) * 1e6},
	} {
		if m := findMetric(t, reg, c.name, c.labels); m == nil || m.GetGauge().GetValue() != c.want {
			t.Errorf("%s%v = %v, want %g", c.name, c.labels, m, c.want)
		}
	}
	if m := findMetric(t, reg, "llmprobe_burst_sweep_step_latency_seconds", map[string]string{"metric": "tpot"}); m != nil {
		t.Errorf("a TPOT point without TPOT samples: %v", m)
	}
	if m := findMetric(t, reg, "llmprobe_burst_sweep_step_offered_rate", map[string]string{"burst": "single"}); m != nil {
		t.Errorf("a burst that did not sweep exports a curve: %v", m)
	}
}
