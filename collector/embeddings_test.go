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

// An embeddings request, measured against the sim, observes e2e and its
// prompt tokens; TTFT, TPOT and ITL get no sample, never a 0.
func TestEmbeddingsObserveNoTokenLatency(t *testing.T) {
	srv, _ := testkit.StartSim(t, nil)
	c, err := prober.NewClient(testkit.Target(srv.URL, config.APIEmbeddings))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cfg, err := config.Parse([]byte(`targets: [{name: t, url: "`+srv.URL+`", api: embeddings}]
scenarios: [{name: s, inputs: 2, prompt_tokens: 16, slo: {e2e: 5s}}]
`), "test")
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Scenarios[0]
	p, _ := prompt.NewBuilder(s, 1).Next()
	res := c.Do(context.Background(), prober.Request{Scenario: s, Traffic: prober.TrafficCanary, Prompt: p, Sched: time.Now()})
	if res.Outcome != prober.OutcomeSuccess {
		t.Fatalf("%s %s", res.Outcome, res.Error)
	}
	probe := NewProbe(true)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(probe)
	probe.Configure(cfg)
	probe.Observe(res)
	labels := map[string]string{"target": "t"}
	if h := histogramOf(t, reg, "llmprobe_request_duration_seconds", labels); h.GetSampleCount() != 1 {
		t.Errorf("e2e samples = %d, want 1", h.GetSampleCount())
	}
	for _, name := range []string{"llmprobe_time_to_first_token_seconds", "llmprobe_time_per_output_token_seconds", "llmprobe_inter_token_latency_seconds"} {
		if m := findMetric(t, reg, name, labels); m != nil && m.GetHistogram().GetSampleCount() != 0 {
			t.Errorf("%s has %d samples; an embedding has no token latency", name, m.GetHistogram().GetSampleCount())
		}
	}
	if m := findMetric(t, reg, "llmprobe_prompt_tokens_total", labels); m == nil || m.GetCounter().GetValue() < 32 {
		t.Errorf("prompt tokens %v, want at least 2 × 16", m)
	}
}
