package burst

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/sim"
)

// Each miss is judged with the prober's own delay taken off that request:
// a sim answering in 60 ms misses a 10 ms TTFT objective whatever the
// prober added, a failure certainly the target's; a sim answering in
// 20 ms, each request released 100 ms late, misses a 100 ms objective as
// measured but not without the prober's delay: inconclusive, saying so.
func TestOwnDelayDecidesEachMiss(t *testing.T) {
	for _, tc := range []struct {
		name           string
		prefill, late  time.Duration
		objective      time.Duration
		verdict        decide.Verdict
		reason         string
		ownDelayMisses bool
	}{
		{"certain misses", 60 * time.Millisecond, 0, 10 * time.Millisecond, decide.Failed, "slo_ttft 0.0% < 90%", false},
		{"misses within the own delay", 20 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond, decide.Inconclusive,
			"slo_ttft 0.0% < 90%: within llmprobe's own delay", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := testkit.StartSim(t, func(c *sim.Config) {
				c.PrefillBase, c.PrefillPerToken, c.DecodeBase, c.DecodePerSeq = tc.prefill, 0, 5*time.Millisecond, 0
			})
			c, err := prober.NewClient(testkit.Target(srv.URL, config.APICompletions))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			b := burstOf(config.ArrivalConstant, 10, 0)
			b.Requests = 20
			s := burstScenario()
			s.SLO.TTFT = config.Duration(tc.objective)
			rep, err := Runner{Client: c, releaseLate: tc.late}.Run(context.Background(), plan.BurstOf(b, s))
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != tc.verdict || !strings.HasPrefix(rep.VerdictReason, tc.reason) {
				t.Fatalf("verdict %q: %q, want %q: %q…", rep.Verdict, rep.VerdictReason, tc.verdict, tc.reason)
			}
			g := rep.Gates[0]
			o := rep.Goodput.PerObjectiveOwnDelay[config.ObjectiveTTFT]
			if tc.ownDelayMisses != (g.OwnDelay == 20) || tc.ownDelayMisses != (o.Requests == 20) {
				t.Errorf("gate %+v, misses within the own delay %+v", g, o)
			}
			if tc.ownDelayMisses && (o.UpTo < tc.late.Seconds() || !strings.Contains(g.Detail, "20 of the misses are within llmprobe's own delay")) {
				t.Errorf("own delay up to %gs, detail %q", o.UpTo, g.Detail)
			}
		})
	}
}
