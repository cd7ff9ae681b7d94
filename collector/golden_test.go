package collector

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/sim"
)

// Golden answers measured against a sim that answers half of them wrong
// are counted in quality_checks_total by result, and the scenario's
// quality_ratio is exported beside the other target ratios.
func TestGoldenChecksAreCounted(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "golden.jsonl")
	if err := os.WriteFile(file, []byte(`{"id": "fr", "prompt": "Capital of France?", "checks": {"contains": "Paris"}, "answer": "Paris"}
{"id": "sum", "prompt": "17 + 25?", "checks": {"regex": "^42$"}, "answer": "42"}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, _ := testkit.StartSim(t, func(c *sim.Config) { c.Golden, c.GoldenWrongRate = file, 0.5 })
	p, err := plan.Parse([]byte(`targets: [{name: t, url: "`+srv.URL+`"}]
scenarios: [{name: g, golden: {file: `+file+`}, output_tokens: 4, slo: {ttft: 5s, quality_ratio: 0.9}}]
`), "test")
	if err != nil {
		t.Fatal(err)
	}
	cfg := p.Config
	c, err := prober.NewClient(cfg.Targets[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	probe := NewProbe(true)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(probe)
	probe.Configure(cfg)
	s, b := cfg.Scenarios[0], p.Scenarios[0].Builder(7)
	count := map[string]float64{}
	for i := range 30 {
		pr, maxTokens := b.At(uint64(i))
		res := c.Do(context.Background(), prober.Request{Scenario: s, Traffic: prober.TrafficCanary, Prompt: pr, MaxTokens: maxTokens, Sched: time.Now()})
		if res.Outcome != prober.OutcomeSuccess || res.Quality == nil {
			t.Fatalf("request %d: %s (%s), quality %+v", i, res.Outcome, res.FailureText(), res.Quality)
		}
		probe.Observe(res)
		if res.Quality.Passed {
			count["passed"]++
		} else {
			count["failed"]++
		}
	}
	if count["passed"] == 0 || count["failed"] == 0 {
		t.Fatalf("answers %v: want some passed and some failed at a wrong rate of 0.5", count)
	}
	for result, want := range count {
		m := findMetric(t, reg, "llmprobe_quality_checks_total", map[string]string{"target": "t", "scenario": "g", "result": result})
		if m == nil || m.GetCounter().GetValue() != want {
			t.Errorf("quality_checks_total{result=%q} = %v, want %g", result, m, want)
		}
	}
	if m := findMetric(t, reg, "llmprobe_good_requests_total", map[string]string{"target": "t"}); m == nil || m.GetCounter().GetValue() != count["passed"] {
		t.Errorf("good requests %v, want the %g answers that passed", m, count["passed"])
	}
	if m := findMetric(t, reg, "llmprobe_slo_target_ratio", map[string]string{"scenario": "g", "objective": "quality"}); m == nil || m.GetGauge().GetValue() != 0.9 {
		t.Errorf("slo_target_ratio{objective=\"quality\"} = %v, want 0.9", m)
	}
}
