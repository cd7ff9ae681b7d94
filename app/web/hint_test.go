package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/prompt"
	"github.com/llmprobe/llmprobe/report/store"
	"github.com/llmprobe/llmprobe/sim"
	"github.com/llmprobe/llmprobe/target"
)

// A probe page suggests vLLM's include_metrics only where it applies: a
// vLLM target whose answer came without per-request timings. A refused
// connection and another engine's answer say why there are none without
// it; a target that already asks is told what else vLLM needs.
func TestEngineTimingsHintOnlyWhereItApplies(t *testing.T) {
	pose := func(engine string) string {
		srv, _ := testkit.StartSim(t, func(c *sim.Config) { c.Engine, c.PerRequestMetrics = engine, false })
		return srv.URL
	}
	vllm := pose("vllm")
	cfg := testkit.Config(t, fmt.Sprintf(`targets:
  - {name: vllm, url: %q}
  - {name: vllm-asking, url: %q, extra_body: {include_metrics: true}}
  - {name: vllm-declining, url: %q, extra_body: {include_metrics: false}}
  - {name: sglang, url: %q}
  - {name: down, url: %q}
scenarios: [{name: s, prompt_tokens: 8, output_tokens: 2}]
`, vllm, vllm, vllm, pose("sglang"), testkit.RefusedURL(t)))
	targets := target.NewSet(log.NewNopLogger())
	t.Cleanup(targets.Stop)
	targets.Apply(context.Background(), cfg)
	site := New(Options{Targets: targets, Store: store.New("", nil), Recent: 5, Failures: 5, Requests: 10})
	mux := http.NewServeMux()
	site.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	// The target set reads each target's identity on its own: wait for it.
	deadline := time.Now().Add(10 * time.Second)
	for _, c := range targets.Clients() {
		for c.Target().Name != "down" && c.Info().Engine == "" {
			if time.Now().After(deadline) {
				t.Fatalf("%s's engine was not read in 10 s", c.Target().Name)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	want := map[string]string{
		"vllm":        "n/a: the engine sent none; vLLM sends them when started with --enable-per-request-metrics and asked with extra_body include_metrics: true",
		"vllm-asking": "n/a: the request asked (extra_body include_metrics) but the engine sent none: vLLM sends them only when started with --enable-per-request-metrics",
		// include_metrics: false asks for none: told to ask.
		"vllm-declining": "n/a: the engine sent none; vLLM sends them when started with --enable-per-request-metrics and asked with extra_body include_metrics: true",
		"sglang":         "n/a: the engine sent none: sglang reports no per-request timings",
		"down":           "n/a: the request failed before an answer could carry them",
	}
	s := cfg.Scenarios[0]
	for i, c := range targets.Clients() {
		p, maxTokens := prompt.NewBuilder(s, prompt.Source{}, 1).Next()
		r := c.Do(context.Background(), prober.Request{Scenario: s, Traffic: prober.TrafficCanary, Prompt: p, MaxTokens: maxTokens, Sched: time.Now()})
		site.Observe(r)
		name := c.Target().Name
		if (r.Outcome == prober.OutcomeSuccess) != (name != "down") || r.Engine != nil {
			t.Fatalf("%s: %s with engine timings %v; want a success without them, and down refused", name, r.Outcome, r.Engine)
		}
		_, page := get(t, srv.URL, fmt.Sprintf("/probe?id=%d", i+1)) // the history numbers probes as they come
		row := "<tr><th>engine timings</th><td>" + want[name] + "</td></tr>"
		if !strings.Contains(page, row) {
			t.Errorf("%s's probe page lacks %q:\n%s", name, row, page)
		}
		if hint := strings.Contains(page, "include_metrics"); hint != strings.HasPrefix(name, "vllm") {
			t.Errorf("%s's probe page mentions include_metrics: %v", name, hint)
		}
	}
}
