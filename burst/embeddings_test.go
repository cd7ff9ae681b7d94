package burst

import (
	"testing"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prober"
)

// A burst of an embeddings target against the sim reports e2e latency and
// prompt tokens; TTFT, TPOT and ITL have no samples (n/a), and no output.
func TestEmbeddingsBurst(t *testing.T) {
	s := testkit.Scenario()
	s.Inputs = 8
	rep := e2eBurst(t, config.APIEmbeddings, s)
	if p := rep.Throughput.PromptTokens; p == nil || *p <= 0 {
		t.Errorf("prompt tokens per second %v, want > 0", p)
	}
	if o, g := rep.Throughput.OutputTokens, rep.Goodput.OutputTokens; o != nil || g != nil {
		t.Errorf("output tokens per second %v, goodput's %v; want n/a", o, g)
	}
}

// simClient is a client of target "t" of api on a default sim.
func simClient(t *testing.T, api config.API) *prober.Client {
	t.Helper()
	srv, _ := testkit.StartSim(t, nil)
	c, err := prober.NewClient(testkit.Target(srv.URL, api))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}
