package plan_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/prompt"
)

// A 128k-token request allocates less, client and server together, than the
// configuration check charges a request in flight (its buffers and nonce):
// a copy of the prompt (some 700 KB) anywhere on the way fails this.
func TestLongRequestAllocatesLessThanItsFootprint(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"length"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	cfg := testkit.Config(t, `
targets: [{name: t, url: "`+srv.URL+`", model: m}]
scenarios: [{name: s, prompt_tokens: 131072, output_tokens: 1}]
bursts:
  - {name: a, target: t, scenarios: [{scenario: s}], arrival: {rate: 1}, requests: 10, max_concurrency: 1}
  - {name: b, target: t, scenarios: [{scenario: s}], arrival: {rate: 1}, requests: 10, max_concurrency: 2}
`)
	p := plan.Of(cfg)
	perRequest := p.Bursts[1].Footprint.Bytes - p.Bursts[0].Footprint.Bytes
	s := cfg.Scenarios[0]
	c, err := prober.NewClient(cfg.Targets[0])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	builder := prompt.NewBuilder(s, prompt.Source{}, 1)
	send := func(n uint64) {
		p, maxTokens := builder.At(n)
		if res := c.Do(context.Background(), prober.Request{Scenario: s, Prompt: p, MaxTokens: maxTokens, Sched: time.Now()}); res.Outcome != prober.OutcomeSuccess {
			t.Fatalf("%s: %s", res.Outcome, res.Error)
		}
	}
	send(0) // the body, the connection
	const n = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range n {
		send(uint64(i + 1))
	}
	runtime.ReadMemStats(&after)
	got := int64(after.TotalAlloc-before.TotalAlloc) / n
	t.Logf("%d bytes allocated per 128k-token request; the footprint charges %d per request in flight", got, perRequest)
	if got > perRequest {
		t.Errorf("a 128k-token request allocates %d bytes, past the %d the footprint charges a request in flight", got, perRequest)
	}
}
