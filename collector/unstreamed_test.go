package collector

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/prompt"
)

// An unstreamed chat request, measured against the sim, observes e2e and
// its output tokens; TTFT, TPOT and ITL get no sample, never a 0.
func TestUnstreamedObservesNoTokenLatency(t *testing.T) {
	reg := observeOnSim(t, config.APIChat, `{name: s, stream: false, prompt_tokens: 16, output_tokens: 5, slo: {e2e: 5s}}`)
	labels := noTokenLatency(t, reg)
	if m := findMetric(t, reg, "llmprobe_output_tokens_total", labels); m == nil || m.GetCounter().GetValue() != 5 {
		t.Errorf("output tokens %v, want the usage's 5", m)
	}
}

// observeOnSim measures one request of scenario (YAML) on a target "t" of
// api against the sim, and observes it into a fresh registry.
func observeOnSim(t *testing.T, api config.API, scenario string) *prometheus.Registry {
	t.Helper()
	srv, _ := testkit.StartSim(t, nil)
	c, err := prober.NewClient(testkit.Target(srv.URL, api))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cfg, err := config.Parse([]byte(`targets: [{name: t, url: "`+srv.URL+`", api: `+string(api)+`}]
scenarios: [`+scenario+`]
`), "test")
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Scenarios[0]
	p, maxTokens := prompt.NewBuilder(s, prompt.Source{}, 1).Next()
	res := c.Do(context.Background(), prober.Request{Scenario: s, Traffic: prober.TrafficCanary, Prompt: p, MaxTokens: maxTokens, Sched: time.Now()})
	if res.Outcome != prober.OutcomeSuccess {
		t.Fatalf("%s %s", res.Outcome, res.Error)
	}
	probe := NewProbe(true)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(probe)
	probe.Configure(cfg)
	probe.Observe(res)
	return reg
}

// noTokenLatency checks that reg holds target t's one e2e sample and no
// TTFT, TPOT or ITL sample; it returns the target's labels.
func noTokenLatency(t *testing.T, reg *prometheus.Registry) map[string]string {
	t.Helper()
	labels := map[string]string{"target": "t"}
	if h := histogramOf(t, reg, "llmprobe_request_duration_seconds", labels); h.GetSampleCount() != 1 {
		t.Errorf("e2e samples = %d, want 1", h.GetSampleCount())
	}
	for _, name := range []string{"llmprobe_time_to_first_token_seconds", "llmprobe_time_per_output_token_seconds", "llmprobe_inter_token_latency_seconds"} {
		if m := findMetric(t, reg, name, labels); m != nil && m.GetHistogram().GetSampleCount() != 0 {
			t.Errorf("%s has %d samples; the answer had no token apart", name, m.GetHistogram().GetSampleCount())
		}
	}
	return labels
}
