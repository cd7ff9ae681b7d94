package tracing_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/prober/transport"
	"github.com/llmprobe/llmprobe/tracing"
)

// BenchmarkObserve is the cost of one request's span on the goroutine that
// reports the result, and of its share of the batch export to a collector
// that reads and discards it.
func BenchmarkObserve(b *testing.B) {
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer sink.Close()
	exp := tracing.New(log.NewNopLogger())
	if err := exp.Configure(configWith(sink.URL, 1, 1<<20, testkit.Target("http://127.0.0.1:8000", config.APIChat))); err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	res := &prober.Result{Target: "t", Scenario: "s", Traffic: prober.TrafficBurst, Model: "m", ResponseModel: "m", Sched: now,
		TTFT: 50 * time.Millisecond, E2E: 700 * time.Millisecond, OutputTokens: 64, OutputChunks: 64, PromptTokensReported: 32,
		FinishReason: "length", HTTPStatus: 200, Outcome: prober.OutcomeSuccess, TokenSource: prober.TokensFromUsage,
		Timings: transport.Timings{DNS: time.Millisecond, Connect: time.Millisecond, Wrote: 3 * time.Millisecond, TTFB: 20 * time.Millisecond}}
	b.ReportAllocs()
	for b.Loop() {
		res.RequestID, res.TraceParent = transport.NewRequestID(nil)
		exp.Observe(res)
	}
	b.StopTimer()
	_ = exp.Shutdown(b.Context())
	if n := exp.Counts(); n.Dropped+n.Failed > 0 {
		b.Fatalf("counts %+v", n)
	}
}
