package prober

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prober/pooling"
)

// Against the sim: a query and 5 documents ranked, e2e and tokens measured,
// no token latency.
func TestRerankAgainstSim(t *testing.T) {
	srv, _ := testkit.StartSim(t, nil)
	s := embeddingsScenario(1)
	s.Documents, s.DocumentTokens = 5, 20
	res := probeOnce(t, testkit.Target(srv.URL, config.APIRerank), s)
	if res.Outcome != OutcomeSuccess || !res.Good || res.Inputs != 5 {
		t.Fatalf("%s %s (good %v, %d results)\n%s", res.Outcome, res.Error, res.Good, res.Inputs, logOf(res))
	}
	// The query's 32 tokens and 5 documents of 20 words (their number included).
	if res.PromptTokensRequested != 32+5*20 || res.PromptTokensReported < 32+5*20 || res.PromptTokensReported > 34+5*20 {
		t.Errorf("prompt tokens requested %d, reported %d; want 132 and about that", res.PromptTokensRequested, res.PromptTokensReported)
	}
	if res.E2E <= 0 || res.FirstTokenSeen() || res.TTFT != 0 || res.ITL != nil || res.OutputTokens != 0 || res.Dimension != 0 {
		t.Errorf("e2e %s; want no token latency, got TTFT %s ITL %v, %d output tokens, dimension %d", res.E2E, res.TTFT, res.ITL, res.OutputTokens, res.Dimension)
	}
	if !strings.Contains(logOf(res), "5 documents ranked") {
		t.Errorf("log:\n%s", logOf(res))
	}
}

// Hostile rerankers: each broken answer fails with its reason in words.
func TestRerankHostile(t *testing.T) {
	results := func(rs ...string) string {
		return `{"results":[` + strings.Join(rs, ",") + `],"usage":{"total_tokens":9}}`
	}
	ok := func(i int) string { return fmt.Sprintf(`{"index":%d,"relevance_score":0.5}`, i) }
	cases := []struct {
		name, body, reason, in string
	}{
		{"wrong count", results(ok(0), ok(1)), pooling.ReasonRerankCount, "2 of 3 results"},
		{"index out of range", results(ok(0), ok(3), ok(1)), pooling.ReasonRerankIndex, "results[1].index 3 is outside [0, 3)"},
		{"index repeats", results(ok(2), ok(0), ok(2)), pooling.ReasonRerankIndex, "results[2].index 2 repeats"},
		{"no index", results(ok(0), `{"relevance_score":0.1}`, ok(1)), pooling.ReasonRerankIndex, "results[1] has no index"},
		{"NaN score", results(ok(0), ok(1), `{"index":2,"relevance_score":"NaN"}`), pooling.ReasonRerankNotFinite, `relevance_score "NaN" at results[2]`},
		{"no score", results(ok(0), `{"index":1}`, ok(2)), pooling.ReasonRerankNotFinite, "relevance_score missing at results[1]"},
		{"huge score", results(ok(0), ok(1), `{"index":2,"relevance_score":1e999}`), pooling.ReasonRerankNotFinite, "1e999 at results[2]"},
		{"not JSON", "<html>", pooling.ReasonRerankNotJSON, "not JSON of the rerank shape"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := testkit.FaultServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, tc.body) })
			s := embeddingsScenario(1)
			s.Documents = 3
			res := probeOnce(t, testkit.Target(srv.URL, config.APIRerank), s)
			if res.Outcome != OutcomeStreamError || res.Reason != tc.reason || !strings.Contains(res.Error, tc.in) || res.Good {
				t.Errorf("%s %s [%s]; want stream_error [%s] with %q", res.Outcome, res.Error, res.Reason, tc.reason, tc.in)
			}
		})
	}
}
