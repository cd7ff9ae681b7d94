package collector

import (
	"testing"

	"github.com/llmprobe/llmprobe/config"
)

// An embeddings request, measured against the sim, observes e2e and its
// prompt tokens; TTFT, TPOT and ITL get no sample, never a 0.
func TestEmbeddingsObserveNoTokenLatency(t *testing.T) {
	reg := observeOnSim(t, config.APIEmbeddings, `{name: s, inputs: 2, prompt_tokens: 16, slo: {e2e: 5s}}`)
	labels := noTokenLatency(t, reg)
	if m := findMetric(t, reg, "llmprobe_prompt_tokens_total", labels); m == nil || m.GetCounter().GetValue() < 32 {
		t.Errorf("prompt tokens %v, want at least 2 × 16", m)
	}
}
