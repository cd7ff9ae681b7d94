package burst

import (
	"context"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/config/workload"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prober"
)

// A burst of an embeddings target against the sim reports e2e latency and
// prompt tokens; TTFT, TPOT and ITL have no samples (n/a), and no output.
func TestEmbeddingsBurst(t *testing.T) {
	c := simClient(t, config.APIEmbeddings)
	s := testkit.Scenario()
	s.Inputs = 8
	s.SLO = workload.SLO{E2E: config.Duration(5 * time.Second), TargetRatio: 0.9}
	b := burstOf(config.ArrivalConstant, 20, time.Second)
	rep, err := Runner{Client: c}.Run(context.Background(), b, []workload.Scenario{s})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests == 0 || rep.Outcomes[prober.OutcomeSuccess] != rep.Requests || !rep.Passed {
		t.Fatalf("%d requests, outcomes %v, passed %v; failures %+v", rep.Requests, rep.Outcomes, rep.Passed, rep.Failures)
	}
	if n := rep.Latency["e2e"].Count; n != rep.Requests {
		t.Errorf("%d e2e samples for %d requests", n, rep.Requests)
	}
	for _, m := range []string{"ttft", "tpot", "itl"} {
		if l, ok := rep.Latency[m]; ok && l.Count != 0 {
			t.Errorf("%s has %d samples; an embedding has none", m, l.Count)
		}
	}
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
