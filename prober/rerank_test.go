package prober

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/sim"
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
		{"wrong count", results(ok(0), ok(1)), reasonRerankCount, "2 of 3 results"},
		{"index out of range", results(ok(0), ok(3), ok(1)), reasonRerankIndex, "results[1].index 3 is outside [0, 3)"},
		{"index repeats", results(ok(2), ok(0), ok(2)), reasonRerankIndex, "results[2].index 2 repeats"},
		{"no index", results(ok(0), `{"relevance_score":0.1}`, ok(1)), reasonRerankIndex, "results[1] has no index"},
		{"NaN score", results(ok(0), ok(1), `{"index":2,"relevance_score":"NaN"}`), reasonRerankNotFinite, `relevance_score "NaN" at results[2]`},
		{"no score", results(ok(0), `{"index":1}`, ok(2)), reasonRerankNotFinite, "relevance_score missing at results[1]"},
		{"huge score", results(ok(0), ok(1), `{"index":2,"relevance_score":1e999}`), reasonRerankNotFinite, "1e999 at results[2]"},
		{"not JSON", "<html>", reasonRerankNotJSON, "not JSON of the rerank shape"},
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

// TEI serves no /v1/models and ranks on its own /rerank: the client learns
// it is TEI from /info, with or without a configured model, then sends
// {query, texts} and reads the bare list and the x-compute-tokens header.
func TestRerankTEI(t *testing.T) {
	srv, _ := testkit.StartSim(t, func(c *sim.Config) { c.Engine = sim.EngineTEI })
	for _, model := range []string{"m", ""} {
		t.Run("model="+model, func(t *testing.T) {
			target := testkit.Target(srv.URL, config.APIRerank)
			target.Model = model
			s := embeddingsScenario(1)
			s.Documents, s.DocumentTokens = 4, 10
			res := probeOnce(t, target, s)
			if res.Outcome != OutcomeSuccess || res.Inputs != 4 {
				t.Fatalf("%s %s\n%s", res.Outcome, res.Error, logOf(res))
			}
			if !strings.Contains(logOf(res), srv.URL+"/rerank ") {
				t.Errorf("want POST /rerank, log:\n%s", logOf(res))
			}
			// The query's 32 words and 4 documents of 10, as TEI's header counts them.
			if res.PromptTokensReported != 32+4*10 {
				t.Errorf("prompt tokens reported %d, want 72 from x-compute-tokens", res.PromptTokensReported)
			}
		})
	}
}

// TEI's bare list is checked as the other shape is.
func TestRerankTEIHostile(t *testing.T) {
	info := `{"model_id":"m","model_type":{"reranker":{}},"version":"1.8.0"}`
	cases := []struct{ name, body, reason, in string }{
		{"wrong count", `[{"index":0,"score":0.5}]`, reasonRerankCount, "1 of 2 results"},
		{"NaN score", `[{"index":0,"score":0.5},{"index":1,"score":"NaN"}]`, reasonRerankNotFinite, `score "NaN" at results[1]`},
		{"OpenAI shape", `{"results":[]}`, reasonRerankNotJSON, "not JSON of the rerank shape"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/info":
					fmt.Fprint(w, info)
				case "/rerank":
					fmt.Fprint(w, tc.body)
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			s := embeddingsScenario(1)
			s.Documents = 2
			res := probeOnce(t, testkit.Target(srv.URL, config.APIRerank), s)
			if res.Outcome != OutcomeStreamError || res.Reason != tc.reason || !strings.Contains(res.Error, tc.in) {
				t.Errorf("%s %s [%s]; want stream_error [%s] with %q\n%s", res.Outcome, res.Error, res.Reason, tc.reason, tc.in, logOf(res))
			}
		})
	}
}
