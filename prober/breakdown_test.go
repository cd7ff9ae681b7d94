package prober

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prober/transport"
	"github.com/llmprobe/llmprobe/prompt"
	"github.com/llmprobe/llmprobe/sim"
)

func sumParts(r *Result) time.Duration {
	var d time.Duration
	for _, p := range r.TTFTParts {
		d += p.D
	}
	return d
}

func componentsOf(r *Result) string {
	var names []string
	for _, p := range r.TTFTParts {
		names = append(names, p.Component)
	}
	return strings.Join(names, ",")
}

// The split is bookkeeping over instants: whatever the engine says, the parts
// are in order, never negative, and add up to TTFT exactly.
func TestSplitTTFT(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	vllm := func(q, p float64) *EngineTimings {
		return &EngineTimings{Source: TimingsVLLM, Queue: ms(q), Prefill: ms(p), HasQueue: true, HasPrefill: true}
	}
	cases := []struct {
		name   string
		res    Result
		want   string // components in order
		expect map[string]time.Duration
	}{
		{"no engine timings", Result{TTFT: ms(100), DispatchDelay: ms(1), Timings: transport.Timings{Wrote: ms(3)}},
			"dispatch,connect,server_other", map[string]time.Duration{"dispatch": ms(1), "connect": ms(2), "server_other": ms(97)}},
		{"vLLM metrics", Result{TTFT: ms(100), DispatchDelay: ms(1), Timings: transport.Timings{Wrote: ms(3)}, Engine: vllm(40, 50)},
			"dispatch,connect,engine_queue,engine_prefill,network", map[string]time.Duration{"engine_queue": ms(40), "engine_prefill": ms(50), "network": ms(7)}},
		{"burst cap wait", Result{TTFT: ms(100), DispatchDelay: ms(1), QueueWait: ms(20), queued: true, Timings: transport.Timings{Wrote: ms(22)}, Engine: vllm(10, 50)},
			"dispatch,client_queue,connect,engine_queue,engine_prefill,network", map[string]time.Duration{"client_queue": ms(20), "connect": ms(1), "network": ms(18)}},
		{"llama.cpp: prefill only", Result{TTFT: ms(100), Timings: transport.Timings{Wrote: ms(1)}, Engine: &EngineTimings{Source: TimingsLlamaCPP, Prefill: ms(30), HasPrefill: true}},
			"dispatch,connect,engine_prefill,server_other", map[string]time.Duration{"engine_prefill": ms(30), "server_other": ms(69)}},
		{"engine a little over the client's wait: rounding, trimmed", Result{TTFT: ms(100), DispatchDelay: ms(10), Timings: transport.Timings{Wrote: ms(10)}, Engine: vllm(40, 50.5)},
			"dispatch,connect,engine_queue,engine_prefill,network", map[string]time.Duration{"connect": 0, "engine_queue": ms(40), "engine_prefill": ms(50), "network": 0}},
		{"engine far over the client's wait: not used", Result{TTFT: ms(100), Timings: transport.Timings{Wrote: ms(10)}, Engine: vllm(80, 50)},
			"dispatch,connect,server_other", map[string]time.Duration{"server_other": ms(90)}},
		{"write stamp late: the engine's figures cap connect", Result{TTFT: ms(100), DispatchDelay: ms(2), Timings: transport.Timings{Wrote: ms(20)}, Engine: vllm(40, 50)},
			"dispatch,connect,engine_queue,engine_prefill,network", map[string]time.Duration{"connect": ms(8), "engine_queue": ms(40), "engine_prefill": ms(50), "network": 0}},
		{"no write seen: the server side starts at sending", Result{TTFT: ms(100), DispatchDelay: ms(5)},
			"dispatch,connect,server_other", map[string]time.Duration{"connect": 0, "server_other": ms(95)}},
		{"instants out of order are clamped", Result{TTFT: ms(10), DispatchDelay: ms(12), Timings: transport.Timings{Wrote: ms(11)}},
			"dispatch,connect,server_other", map[string]time.Duration{"dispatch": ms(10), "connect": 0, "server_other": 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.res
			r.OutputChunks = 1
			r.splitTTFT()
			if got := componentsOf(&r); got != tc.want {
				t.Fatalf("components %s, want %s", got, tc.want)
			}
			if s := sumParts(&r); s != r.TTFT {
				t.Errorf("parts add up to %s, TTFT %s: %s", s, r.TTFT, r.TTFTSplitText())
			}
			for _, p := range r.TTFTParts {
				if p.D < 0 {
					t.Errorf("%s is negative: %s", p.Component, r.TTFTSplitText())
				}
			}
			for c, want := range tc.expect {
				if got, _ := r.TTFTPart(c); got != want {
					t.Errorf("%s = %s, want %s (%s)", c, got, want, r.TTFTSplitText())
				}
			}
		})
	}
	var none Result
	none.splitTTFT()
	if none.TTFTParts != nil {
		t.Errorf("a request without a first token has parts: %v", none.TTFTParts)
	}
}

// A timings object of the wrong shape is logged and left out; the stream is
// measured as if it were not there.
func TestGarbageEngineTimings(t *testing.T) {
	cases := map[string]string{
		"metrics a string":     `"metrics":"fast"`,
		"queue a string":       `"metrics":{"queue_time_ms":"abc"}`,
		"negative prefill":     `"metrics":{"queue_time_ms":1,"time_to_first_token_ms":-5}`,
		"absurd prefill":       `"metrics":{"queue_time_ms":1,"time_to_first_token_ms":1e300}`,
		"timings a list":       `"timings":[1,2]`,
		"timings prompt_ms {}": `"timings":{"prompt_ms":{}}`,
	}
	for name, field := range cases {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				for _, tok := range []string{"a", "b"} {
					_, _ = w.Write([]byte(`data: {"choices":[{"index":0,"delta":{"content":"` + tok + `"}}]}` + "\n\n"))
				}
				_, _ = w.Write([]byte(`data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":2},` + field + "}\n\ndata: [DONE]\n\n"))
			}))
			defer srv.Close()
			res := probeOnce(t, testkit.Target(srv.URL, config.APIChat), testkit.Scenario())
			if res.Outcome != OutcomeSuccess || res.OutputTokens != 2 {
				t.Fatalf("outcome %s (%s), %d tokens: a bad timings object broke the measurement\n%s", res.Outcome, res.Error, res.OutputTokens, logOf(res))
			}
			if res.Engine != nil && res.Engine.HasPrefill {
				t.Errorf("a garbage prefill was kept: %+v", res.Engine)
			}
			if !strings.Contains(logOf(res), "engine timings partly ignored") {
				t.Errorf("the log does not say the timings were ignored:\n%s", logOf(res))
			}
			if s := sumParts(res); s != res.TTFT {
				t.Errorf("parts %s != TTFT %s", s, res.TTFT)
			}
		})
	}
}

// llama.cpp's real timings object: prefill from prompt_ms, no queue figure,
// so the rest of the server side stays unsplit.
func TestLlamaCPPTimingsTranscript(t *testing.T) {
	srv := replay(t, loadTranscript(t, "llamacpp-completions-usage.sse"), 5*time.Millisecond)
	res := probeOnce(t, testkit.Target(srv.URL, config.APICompletions), testkit.Scenario())
	if res.Outcome != OutcomeSuccess {
		t.Fatalf("%s: %s", res.Outcome, res.Error)
	}
	e := res.Engine
	if e == nil || e.Source != TimingsLlamaCPP || !e.HasPrefill || e.HasQueue {
		t.Fatalf("engine timings %+v, want llama.cpp's prefill and no queue", e)
	}
	if e.Prefill != 2126*time.Microsecond || e.Decode != 3098*time.Microsecond || e.CachedPromptTokens != 0 {
		t.Errorf("prefill %s, decode %s, cached %d; want 2.126ms, 3.098ms, 0 as the transcript says", e.Prefill, e.Decode, e.CachedPromptTokens)
	}
	// The timings arrive on the last chunk, after the first token: the
	// replayed server answers faster than its timings say, so they exceed
	// the client's wait and are not used, with the reason in the log.
	if got := componentsOf(res); got != "dispatch,connect,engine_prefill,server_other" && got != "dispatch,connect,server_other" {
		t.Errorf("components %s", got)
	}
	if s := sumParts(res); s != res.TTFT {
		t.Errorf("parts %s != TTFT %s", s, res.TTFT)
	}
}

// Every request carries a W3C traceparent whose trace id is its request id.
func TestTraceParent(t *testing.T) {
	var mu sync.Mutex
	var got []http.Header
	srv, _ := testkit.StartSim(t, nil)
	spy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Clone())
		mu.Unlock()
		srv.Config.Handler.ServeHTTP(w, r)
	}))
	defer spy.Close()
	c := newClient(t, testkit.Target(spy.URL, config.APIChat))
	s := testkit.Scenario()
	seen := map[string]bool{}
	for range 3 {
		p, maxTokens := prompt.NewBuilder(s, prompt.Source{}, 1).Next()
		res := c.Do(context.Background(), Request{Scenario: s, Traffic: TrafficCanary, Prompt: p, MaxTokens: maxTokens, Sched: time.Now()})
		m := regexp.MustCompile(`^00-([0-9a-f]{32})-([0-9a-f]{16})-01$`).FindStringSubmatch(res.TraceParent)
		if m == nil || m[1] != res.RequestID || m[2] == "0000000000000000" {
			t.Fatalf("traceparent %q for request id %q", res.TraceParent, res.RequestID)
		}
		if seen[m[2]] {
			t.Errorf("span id %s reused", m[2])
		}
		seen[m[2]] = true
	}
	mu.Lock()
	defer mu.Unlock()
	n := 0
	for _, h := range got {
		if tp := h.Get("Traceparent"); tp != "" {
			n++
			if !strings.Contains(tp, h.Get("X-Request-Id")) {
				t.Errorf("traceparent %q does not carry X-Request-Id %q", tp, h.Get("X-Request-Id"))
			}
		}
	}
	if n != 3 {
		t.Errorf("%d requests carried a traceparent, want 3", n)
	}
}

// Against the sim, which reports each request's queue and prefill as vLLM
// does: the split takes the engine's figures as they were sent, the parts add
// up to TTFT exactly, and requests sent while a long one holds the batch of
// one show their wait as engine queue, not as prefill or network.
func TestSplitAgainstSim(t *testing.T) {
	srv, engine := testkit.StartSim(t, func(c *sim.Config) { c.MaxBatch = 1 })
	target := testkit.Target(srv.URL, config.APIChat)
	target.ExtraBody = map[string]any{"include_metrics": true}
	c := newClient(t, target)
	send := func(s config.Scenario, seed uint64) *Result {
		p, maxTokens := prompt.NewBuilder(s, prompt.Source{}, seed).Next()
		return c.Do(context.Background(), Request{Scenario: s, Traffic: TrafficCanary, Prompt: p, MaxTokens: maxTokens, Sched: time.Now()})
	}
	long, short := testkit.Scenario(), testkit.Scenario()
	long.OutputTokens = config.Distribution{Kind: config.DistFixed, Value: 50} // holds the batch ~540 ms
	short.OutputTokens = config.Distribution{Kind: config.DistFixed, Value: 2}

	results := make([]*Result, 3)
	var wg sync.WaitGroup
	wg.Go(func() { results[0] = send(long, 1) })
	// The next two are sent once the long one runs: they wait for its end.
	testkit.WaitUntil(t, "the long request in the batch", 5*time.Second, func() bool { return engine.Stats().Running == 1 })
	for i := 1; i < 3; i++ {
		wg.Go(func() { results[i] = send(short, uint64(i+1)) })
	}
	wg.Wait()
	for i, r := range results {
		if r.Outcome != OutcomeSuccess {
			t.Fatalf("%s: %s\n%s", r.Outcome, r.Error, logOf(r))
		}
		if got := componentsOf(r); got != "dispatch,connect,engine_queue,engine_prefill,network" {
			t.Fatalf("components %s, want the engine's split\n%s", got, logOf(r))
		}
		if s := sumParts(r); s != r.TTFT {
			t.Errorf("parts %s != TTFT %s", s, r.TTFT)
		}
		q, _ := r.TTFTPart(ComponentEngineQueue)
		p, _ := r.TTFTPart(ComponentEnginePrefill)
		if q != r.Engine.Queue || p != r.Engine.Prefill {
			t.Errorf("queue %s prefill %s, the engine said %s and %s", q, p, r.Engine.Queue, r.Engine.Prefill)
		}
		// A prefill step is 50 ms: a little less when the step before ran
		// late (steps keep their deadlines), more when the machine is busy.
		if p < 40*time.Millisecond {
			t.Errorf("request %d: prefill %s, want the sim's 50ms step", i, p)
		}
		if i > 0 && q < 100*time.Millisecond {
			t.Errorf("request %d: engine queue %s, want the long request's remaining decode (%s)", i, q, r.TTFTSplitText())
		}
	}
}

// Without include_metrics (or from an engine without per-request metrics)
// the server side is one part, and the log says which engine timings were
// used.
func TestSplitWithoutEngineTimings(t *testing.T) {
	srv, _ := testkit.StartSim(t, nil)
	res := probeOnce(t, testkit.Target(srv.URL, config.APIChat), testkit.Scenario())
	if res.Outcome != OutcomeSuccess {
		t.Fatalf("%s: %s", res.Outcome, res.Error)
	}
	if res.Engine != nil || componentsOf(res) != "dispatch,connect,server_other" {
		t.Errorf("engine %+v, components %s; want no engine timings and an unsplit server side", res.Engine, componentsOf(res))
	}
	if !strings.Contains(logOf(res), "ttft split: dispatch=") {
		t.Errorf("the log does not show the split:\n%s", logOf(res))
	}
}
