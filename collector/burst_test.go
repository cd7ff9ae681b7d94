package collector

import (
	"bytes"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/stats"
)

// The error bound is exported per burst as p99 and max, lint-clean; a
// report without one (written before it, or with its runtime unsampled)
// exports none rather than a 0.
func TestBurstErrorBound(t *testing.T) {
	p99, maxBound := 0.0006, 0.0033
	bursts := NewBursts()
	bursts.Finished(&report.Report{Burst: "measured", ClientSaturated: true, ErrorBound: &stats.ErrorBound{P99: &p99, Max: &maxBound, Limit: 0.0001}}, nil)
	bursts.Finished(&report.Report{Burst: "unsampled", ErrorBound: &stats.ErrorBound{Limit: 0.01}}, nil)
	bursts.Restore(&report.Report{Burst: "old"})
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(bursts)

	const name = "llmprobe_burst_measurement_error_bound_seconds"
	for q, want := range map[string]float64{"p99": p99, "max": maxBound} {
		m := findMetric(t, reg, name, map[string]string{"burst": "measured", "percentile": q})
		if m == nil || m.GetGauge().GetValue() != want {
			t.Errorf("%s{percentile=%q} = %v, want %g", name, q, m, want)
		}
	}
	for _, burst := range []string{"unsampled", "old"} {
		if m := findMetric(t, reg, name, map[string]string{"burst": burst}); m != nil {
			t.Errorf("burst %s without a bound exports %v", burst, m)
		}
	}
	if m := findMetric(t, reg, "llmprobe_burst_client_saturated", map[string]string{"burst": "measured"}); m == nil || m.GetGauge().GetValue() != 1 {
		t.Errorf("client_saturated of the saturated burst: %v", m)
	}

	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	enc := expfmt.NewEncoder(&page, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range fams {
		if err := enc.Encode(f); err != nil {
			t.Fatal(err)
		}
	}
	testkit.PromtoolCheckMetrics(t, page.String())
}

// Each TTFT component of the last burst is exported as its percentiles; a
// component no request had, and a report without a split, export nothing.
func TestBurstTTFTComponents(t *testing.T) {
	bursts := NewBursts()
	bursts.Finished(&report.Report{Burst: "split", TTFTBreakdown: &report.TTFTBreakdown{Requests: 3, Components: []report.ComponentSummary{
		{Component: "engine_queue", Summary: stats.Summarize([]float64{0.01, 0.02, 0.09})},
	}}}, nil)
	bursts.Restore(&report.Report{Burst: "old"})
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(bursts)
	const name = "llmprobe_burst_ttft_component_seconds"
	if m := findMetric(t, reg, name, map[string]string{"burst": "split", "component": "engine_queue", "percentile": "p50"}); m == nil || m.GetGauge().GetValue() != 0.02 {
		t.Errorf("engine_queue p50: %v, want 0.02", m)
	}
	for _, labels := range []map[string]string{{"burst": "split", "component": "engine_prefill"}, {"burst": "old"}} {
		if m := findMetric(t, reg, name, labels); m != nil {
			t.Errorf("%v exports %v", labels, m)
		}
	}
}

// Skipped starts count per burst with every or at, from 0; a gate-only
// burst has no such series, and a burst a reload removed loses it.
func TestBurstSkippedStarts(t *testing.T) {
	bursts := NewBursts()
	cfg := testkit.Config(t, `targets: [{name: t, url: "http://127.0.0.1:1", model: m}]
scenarios: [{name: s}]
bursts:
  - {name: every, target: t, scenarios: [{scenario: s}], arrival: {rate: 1}, requests: 2, schedule: {every: 1m}}
  - {name: nightly, target: t, scenarios: [{scenario: s}], arrival: {rate: 1}, requests: 2, schedule: {at: ["02:00"]}}
  - {name: gate, target: t, scenarios: [{scenario: s}], arrival: {rate: 1}, requests: 2}
`)
	bursts.Configure(cfg)
	bursts.Skipped("every", 2)
	bursts.Skipped("every", 1)
	bursts.Skipped("removed", 1)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(bursts)
	const name = "llmprobe_burst_skipped_starts_total"
	for burst, want := range map[string]float64{"every": 3, "nightly": 0} {
		if m := findMetric(t, reg, name, map[string]string{"burst": burst}); m == nil || m.GetCounter().GetValue() != want {
			t.Errorf("%s{burst=%q} = %v, want %g", name, burst, m, want)
		}
	}
	for _, burst := range []string{"gate", "removed"} {
		if m := findMetric(t, reg, name, map[string]string{"burst": burst}); m != nil {
			t.Errorf("burst %s exports %v", burst, m)
		}
	}
}
