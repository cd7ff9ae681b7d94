package burst

import (
	"context"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
)

// A burst of an unstreamed scenario against the sim reports e2e latency
// and the usage's tokens; TTFT, TPOT and ITL have no samples (n/a).
func TestUnstreamedBurst(t *testing.T) {
	s := testkit.Scenario()
	off := false
	s.Stream = &off
	rep := e2eBurst(t, config.APIResponses, s)
	if o := rep.Throughput.OutputTokens; o == nil || *o <= 0 || rep.TokenSources[prober.TokensFromUsage] != rep.Requests {
		t.Errorf("output tokens per second %v, sources %v; want the usage's", o, rep.TokenSources)
	}
}

// e2eBurst runs a second of 20 requests/s of s, with an e2e objective, on
// a target of api against the sim: each succeeds with its e2e, and TTFT,
// TPOT and ITL have no sample.
func e2eBurst(t *testing.T, api config.API, s config.Scenario) *report.Report {
	t.Helper()
	s.SLO = config.SLO{E2E: config.Duration(5 * time.Second), TargetRatio: 0.9}
	// 40 requests all meeting the objective show 90 % met (35 would).
	rep, err := Runner{Client: simClient(t, api)}.Run(context.Background(), plan.BurstOf(burstOf(config.ArrivalConstant, 20, 2*time.Second), s))
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
			t.Errorf("%s has %d samples; the answers had no token apart", m, l.Count)
		}
	}
	return rep
}
