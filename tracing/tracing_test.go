package tracing_test

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/prober/transport"
	"github.com/llmprobe/llmprobe/prompt"
	"github.com/llmprobe/llmprobe/tracing"
)

// receiver is an OTLP/HTTP traces endpoint that keeps every span it is sent,
// decoded with the OTLP protobuf types.
type receiver struct {
	srv   *httptest.Server
	mu    sync.Mutex
	spans []*tracepb.Span
	paths []string
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var msg collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &msg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.paths = append(r.paths, req.URL.Path)
		for _, rs := range msg.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				r.spans = append(r.spans, ss.Spans...)
			}
		}
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		_, _ = w.Write(out)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) got() []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*tracepb.Span(nil), r.spans...)
}

func configWith(endpoint string, ratio float64, queue int, target config.Target) *config.Config {
	tr := config.DefaultTracing
	tr.Endpoint, tr.Sampling, tr.QueueSize = endpoint, &ratio, queue
	return &config.Config{Targets: []config.Target{target}, Tracing: &tr}
}

func attrs(s *tracepb.Span) map[string]*commonpb.AnyValue {
	out := map[string]*commonpb.AnyValue{}
	for _, kv := range s.Attributes {
		out[kv.Key] = kv.Value
	}
	return out
}

// Each request on the sim becomes one client span whose trace id is the
// request's id and whose span id is the parent id its traceparent gave the
// engine, with the GenAI attributes and the phases at the request's moments.
func TestSpanCarriesTheRequestsIDs(t *testing.T) {
	srv, _ := testkit.StartSim(t, nil)
	rcv := newReceiver(t)
	target := testkit.Target(srv.URL, config.APIChat)
	exp := tracing.New(log.NewNopLogger())
	if err := exp.Configure(configWith(rcv.srv.URL, 1, 64, target)); err != nil {
		t.Fatal(err)
	}
	c, err := prober.NewClient(target, prober.WithSampler(exp))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := testkit.Scenario()
	var results []*prober.Result
	for range 3 {
		p, maxTokens := prompt.NewBuilder(s, prompt.Source{}, 1).Next()
		res := c.Do(t.Context(), prober.Request{Scenario: s, Prompt: p, MaxTokens: maxTokens, Sched: time.Now(), Traffic: prober.TrafficCanary})
		if res.Outcome != prober.OutcomeSuccess || !strings.HasSuffix(res.TraceParent, "-01") {
			t.Fatalf("request: %s %s, traceparent %s", res.Outcome, res.FailureText(), res.TraceParent)
		}
		exp.Observe(res)
		results = append(results, res)
	}
	if err := exp.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	spans := rcv.got()
	if len(spans) != 3 || rcv.paths[0] != "/v1/traces" {
		t.Fatalf("%d spans at %v, want 3 at /v1/traces", len(spans), rcv.paths)
	}
	if n := exp.Counts(); n != (tracing.Counts{Exported: 3}) {
		t.Errorf("counts %+v, want 3 exported", n)
	}
	for i, res := range results {
		sp := spans[i]
		parent := strings.Split(res.TraceParent, "-")[2]
		if hex.EncodeToString(sp.TraceId) != res.RequestID || hex.EncodeToString(sp.SpanId) != parent || len(sp.ParentSpanId) != 0 {
			t.Errorf("span %x/%x parent %x; want trace %s span %s, no parent", sp.TraceId, sp.SpanId, sp.ParentSpanId, res.RequestID, parent)
		}
		if sp.Kind != tracepb.Span_SPAN_KIND_CLIENT || sp.Name != "chat m" {
			t.Errorf("span %q kind %s, want \"chat m\" client", sp.Name, sp.Kind)
		}
		if sp.StartTimeUnixNano != uint64(res.Sched.UnixNano()) || sp.EndTimeUnixNano != uint64(res.Sched.Add(res.E2E).UnixNano()) {
			t.Errorf("span from %d to %d, want the request's due time to its last byte", sp.StartTimeUnixNano, sp.EndTimeUnixNano)
		}
		a := attrs(sp)
		want := map[string]string{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "m",
			"gen_ai.response.model": "m", "server.address": "127.0.0.1", "llmprobe.target": "t", "llmprobe.traffic": "canary", "llmprobe.request_id": res.RequestID}
		for k, v := range want {
			if a[k].GetStringValue() != v {
				t.Errorf("%s = %v, want %q", k, a[k], v)
			}
		}
		if a["gen_ai.usage.output_tokens"].GetIntValue() != int64(res.OutputTokens) || res.OutputTokens != 6 ||
			a["gen_ai.usage.input_tokens"].GetIntValue() != int64(res.PromptTokensReported) || res.PromptTokensReported == 0 {
			t.Errorf("tokens in %v out %v; the result says %d in, %d out", a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"], res.PromptTokensReported, res.OutputTokens)
		}
		if fr := a["gen_ai.response.finish_reasons"].GetArrayValue().GetValues(); len(fr) != 1 || fr[0].GetStringValue() != res.FinishReason {
			t.Errorf("finish reasons %v, want [%s]", fr, res.FinishReason)
		}
		events := map[string]uint64{}
		for _, ev := range sp.Events {
			events[ev.Name] = ev.TimeUnixNano
		}
		if events["first_token"] != uint64(res.Sched.Add(res.TTFT).UnixNano()) || events["first_byte"] == 0 || events["last_token"] != sp.EndTimeUnixNano {
			t.Errorf("events %v; want first_byte, first_token at TTFT %s and last_token at the end", events, res.TTFT)
		}
		if i == 0 && (events["connect"] == 0) {
			t.Errorf("the first request dialled: want a connect event, have %v", events)
		}
	}
}

// The sampled flag of a request's traceparent says whether its span is
// exported: the ratio decides from the trace id, and a request sent as not
// sampled makes no span. With tracing off, every request says sampled.
func TestSamplingDecidesTheFlag(t *testing.T) {
	srv, _ := testkit.StartSim(t, nil)
	rcv := newReceiver(t)
	target := testkit.Target(srv.URL, config.APIChat)
	exp := tracing.New(log.NewNopLogger())
	for range 100 {
		id, _ := transport.NewRequestID(nil)
		if !exp.Sampled(id) {
			t.Fatal("tracing is off, yet a request is not sampled")
		}
	}
	if err := exp.Configure(configWith(rcv.srv.URL, 0.25, 64, target)); err != nil {
		t.Fatal(err)
	}
	sampled := 0
	const ids = 20000
	for range ids {
		id, _ := transport.NewRequestID(nil)
		if exp.Sampled(id) {
			sampled++
		}
	}
	// Binomial(20000, 0.25): sd 61; 0.25 ± 0.02 is ±8 sd.
	if share := float64(sampled) / ids; share < 0.23 || share > 0.27 {
		t.Errorf("%.3f of requests sampled at ratio 0.25", share)
	}
	c, err := prober.NewClient(target, prober.WithSampler(exp))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := testkit.Scenario()
	results := make([]*prober.Result, 24)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			p, maxTokens := prompt.NewBuilder(s, prompt.Source{}, uint64(i)).Next()
			results[i] = c.Do(t.Context(), prober.Request{Scenario: s, Prompt: p, MaxTokens: maxTokens, Sched: time.Now()})
		})
	}
	wg.Wait()
	want := map[string]bool{}
	for _, res := range results {
		exp.Observe(res)
		if strings.HasSuffix(res.TraceParent, "-01") != exp.Sampled(res.RequestID) {
			t.Errorf("traceparent %s, yet Sampled says %v", res.TraceParent, exp.Sampled(res.RequestID))
		}
		if strings.HasSuffix(res.TraceParent, "-01") {
			want[res.RequestID] = true
		}
	}
	if err := exp.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	spans := rcv.got()
	for _, sp := range spans {
		if !want[hex.EncodeToString(sp.TraceId)] {
			t.Errorf("span of %x, whose traceparent said not sampled", sp.TraceId)
		}
	}
	if len(spans) != len(want) {
		t.Errorf("%d spans for %d sampled requests of 24", len(spans), len(want))
	}
}

// A collector that is down costs nothing but counted spans: Observe never
// waits, a full queue drops, every span is counted as failed or dropped.
func TestDeadCollectorOnlyCounts(t *testing.T) {
	target := testkit.Target("http://127.0.0.1:1", config.APIChat)
	exp := tracing.New(log.NewNopLogger())
	if err := exp.Configure(configWith(testkit.RefusedURL(t), 1, 4, target)); err != nil {
		t.Fatal(err)
	}
	const n = 50
	for range n {
		id, tp := transport.NewRequestID(exp.Sampled)
		exp.Observe(&prober.Result{Target: "t", Model: "m", RequestID: id, TraceParent: tp, Sched: time.Now(), E2E: time.Millisecond, Outcome: prober.OutcomeSuccess})
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_ = exp.Shutdown(ctx)
	got := exp.Counts()
	if got.Exported != 0 || got.Failed+got.Dropped != n || got.Dropped == 0 {
		t.Errorf("counts %+v; want all %d failed or dropped, some dropped (queue of 4)", got, n)
	}
}

// A Messages API target's span is a chat operation of Anthropic's flavour.
func TestMessagesSpanIsAnthropicChat(t *testing.T) {
	rcv := newReceiver(t)
	exp := tracing.New(log.NewNopLogger())
	if err := exp.Configure(configWith(rcv.srv.URL, 1, 8, testkit.Target("http://127.0.0.1:8000", config.APIMessages))); err != nil {
		t.Fatal(err)
	}
	id, tp := transport.NewRequestID(exp.Sampled)
	exp.Observe(&prober.Result{Target: "t", Model: "m", RequestID: id, TraceParent: tp, Sched: time.Now(), E2E: time.Millisecond, Outcome: prober.OutcomeSuccess})
	if err := exp.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	spans := rcv.got()
	if len(spans) != 1 {
		t.Fatalf("%d spans", len(spans))
	}
	a := attrs(spans[0])
	if spans[0].Name != "chat m" || a["gen_ai.operation.name"].GetStringValue() != "chat" || a["gen_ai.provider.name"].GetStringValue() != "anthropic" {
		t.Errorf("span %q, operation %v, provider %v", spans[0].Name, a["gen_ai.operation.name"], a["gen_ai.provider.name"])
	}
}
