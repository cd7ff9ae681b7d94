package sim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/llmprobe/llmprobe/sim/internal/persona"
	"github.com/llmprobe/llmprobe/sim/internal/request"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func start(t *testing.T, mutate func(*Config)) (*Engine, *httptest.Server) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Model = "m"
	if mutate != nil {
		mutate(&cfg)
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e.Handler())
	t.Cleanup(func() { srv.Close(); e.Close() })
	return e, srv
}

type streamed struct {
	status int
	events []string // data payloads
	times  []time.Duration
	err    error
}

// stream posts body and reads the SSE data lines with their arrival times.
func stream(t *testing.T, url, path, body string) streamed {
	t.Helper()
	begin := time.Now()
	resp, err := http.Post(url+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := streamed{status: resp.StatusCode}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out.events = append(out.events, data)
			out.times = append(out.times, time.Since(begin))
		}
	}
	out.err = sc.Err()
	return out
}

func chatBody(maxTokens int, extra string) string {
	return `{"model":"m","stream":true,"max_tokens":` + strconv.Itoa(maxTokens) + `,"messages":[{"role":"user","content":"one two three"}]` + extra + `}`
}

func completionBody(maxTokens int, extra string) string {
	return `{"model":"m","stream":true,"max_tokens":` + strconv.Itoa(maxTokens) + `,"prompt":"one two three four"` + extra + `}`
}

type chunkView struct {
	Choices []struct {
		Text  *string `json:"text"`
		Delta map[string]any
	} `json:"choices"`
	Usage *usageJSON `json:"usage"`
}

func parse(t *testing.T, data string) chunkView {
	t.Helper()
	var c chunkView
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		t.Fatalf("chunk %q: %v", data, err)
	}
	return c
}

func medianOf(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func near(got, want, tol time.Duration) bool { return got >= want-tol && got <= want+tol }

// A known schedule: 50 ms prefill, then a token every 10 ms.
func TestTimingSchedule(t *testing.T) {
	_, srv := start(t, func(c *Config) {
		c.PrefillBase, c.PrefillPerToken, c.DecodeBase, c.DecodePerSeq = 50*time.Millisecond, 0, 10*time.Millisecond, 0
		c.Faults.RoleOnlyFirstChunk = false
	})
	var firsts, gaps []time.Duration
	for range 5 {
		s := stream(t, srv.URL, "/v1/completions", completionBody(10, ""))
		firsts = append(firsts, s.times[0])
		for i := 1; i < 10; i++ {
			gaps = append(gaps, s.times[i]-s.times[i-1])
		}
	}
	if m := medianOf(firsts); !near(m, 50*time.Millisecond, 5*time.Millisecond) {
		t.Errorf("median TTFT = %s, want 50ms ± 5ms", m)
	}
	if m := medianOf(gaps); !near(m, 10*time.Millisecond, 5*time.Millisecond) {
		t.Errorf("median token gap = %s, want 10ms ± 5ms", m)
	}
}

func TestQueueFullRejects(t *testing.T) {
	_, srv := start(t, func(c *Config) {
		c.MaxBatch, c.MaxQueue, c.DecodeBase = 1, 1, 20*time.Millisecond
	})
	var wg sync.WaitGroup
	statuses := make([]int, 4)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = stream(t, srv.URL, "/v1/completions", completionBody(20, "")).status
		}()
	}
	wg.Wait()
	rejected := 0
	for _, s := range statuses {
		if s == http.StatusTooManyRequests {
			rejected++
		}
	}
	// One runs, one waits; of four at once at least one is refused.
	if rejected == 0 {
		t.Errorf("statuses = %v, want a 429", statuses)
	}
}

// Decode steps grow with the batch: 8 together are slower per token than 1 alone.
func TestBatchingSlowsDecode(t *testing.T) {
	_, srv := start(t, func(c *Config) {
		c.PrefillBase, c.PrefillPerToken, c.DecodeBase, c.DecodePerSeq = 5*time.Millisecond, 0, 5*time.Millisecond, 3*time.Millisecond
	})
	itl := func(n int) time.Duration {
		var mu sync.Mutex
		var gaps []time.Duration
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := stream(t, srv.URL, "/v1/completions", completionBody(20, ""))
				mu.Lock()
				defer mu.Unlock()
				for i := 5; i < 20; i++ {
					gaps = append(gaps, s.times[i]-s.times[i-1])
				}
			}()
		}
		wg.Wait()
		return medianOf(gaps)
	}
	alone, together := itl(1), itl(8)
	// 8 running: 5ms + 7×3ms = 26ms per step, against 5ms alone.
	if together < alone+15*time.Millisecond {
		t.Errorf("median ITL alone %s, with 8 %s: the batch does not slow decode", alone, together)
	}
}

func TestFaultsOnTheWire(t *testing.T) {
	cases := []struct {
		name  string
		f     Faults
		path  string
		body  string
		check func(t *testing.T, s streamed)
	}{
		{"error", Faults{ErrorRate: 1, ErrorStatus: 503}, "/v1/completions", completionBody(4, ""), func(t *testing.T, s streamed) {
			if s.status != 503 {
				t.Errorf("status %d", s.status)
			}
		}},
		{"malformed", Faults{MalformedRate: 1, MalformedAfterTokens: 1}, "/v1/completions", completionBody(4, ""), func(t *testing.T, s streamed) {
			bad := 0
			for _, e := range s.events {
				if !json.Valid([]byte(e)) && e != "[DONE]" {
					bad++
				}
			}
			if bad != 1 {
				t.Errorf("%d invalid lines, want 1: %q", bad, s.events)
			}
		}},
		{"disconnect", Faults{DisconnectRate: 1, DisconnectAfterTokens: 2}, "/v1/completions", completionBody(6, ""), func(t *testing.T, s streamed) {
			if s.err == nil || slices.Contains(s.events, "[DONE]") {
				t.Errorf("err %v, events %q: want a cut stream", s.err, s.events)
			}
		}},
		{"tokens per chunk", Faults{TokensPerChunk: 3}, "/v1/completions", completionBody(7, `,"stream_options":{"include_usage":true}`), func(t *testing.T, s streamed) {
			// 3+3+1 text chunks, finish, usage, [DONE]
			if len(s.events) != 6 || len(strings.Fields(*parse(t, s.events[0]).Choices[0].Text)) != 3 {
				t.Errorf("events %q", s.events)
			}
		}},
		{"role-only and reasoning", Faults{RoleOnlyFirstChunk: true, ReasoningTokens: 2}, "/v1/chat/completions", chatBody(4, ""), func(t *testing.T, s streamed) {
			first, second, fourth := parse(t, s.events[0]), parse(t, s.events[1]), parse(t, s.events[3])
			if first.Choices[0].Delta["role"] != "assistant" || first.Choices[0].Delta["content"] != "" {
				t.Errorf("first chunk %q is not role-only", s.events[0])
			}
			if _, ok := second.Choices[0].Delta["reasoning_content"]; !ok {
				t.Errorf("second chunk %q is not reasoning", s.events[1])
			}
			if _, ok := fourth.Choices[0].Delta["content"]; !ok {
				t.Errorf("fourth chunk %q is not content", s.events[3])
			}
		}},
		{"reasoning in usage", Faults{ReasoningTokens: 2}, "/v1/chat/completions", chatBody(5, `,"stream_options":{"include_usage":true}`), func(t *testing.T, s streamed) {
			u := parse(t, s.events[len(s.events)-2]).Usage
			if u == nil || u.CompletionTokens != 5 || u.CompletionTokensDetails == nil || u.CompletionTokensDetails.ReasoningTokens != 2 {
				t.Errorf("usage chunk %q: want 2 of 5 completion tokens as reasoning", s.events[len(s.events)-2])
			}
		}},
		{"usage separate", Faults{}, "/v1/chat/completions", chatBody(3, `,"stream_options":{"include_usage":true}`), func(t *testing.T, s streamed) {
			last := parse(t, s.events[len(s.events)-2])
			if len(last.Choices) != 0 || last.Usage == nil || last.Usage.CompletionTokens != 3 || last.Usage.PromptTokens != 3+request.TemplateTokens || last.Usage.CompletionTokensDetails != nil {
				t.Errorf("usage chunk %q", s.events[len(s.events)-2])
			}
		}},
		{"usage on finish", Faults{UsagePlacement: UsageFinish}, "/v1/completions", completionBody(3, `,"stream_options":{"include_usage":true}`), func(t *testing.T, s streamed) {
			finish := parse(t, s.events[len(s.events)-2])
			if len(finish.Choices) != 1 || finish.Usage == nil || finish.Usage.CompletionTokens != 3 || finish.Usage.PromptTokens != 4 {
				t.Errorf("finish chunk %q", s.events[len(s.events)-2])
			}
		}},
		{"usage none", Faults{UsagePlacement: UsageNone}, "/v1/completions", completionBody(3, `,"stream_options":{"include_usage":true}`), func(t *testing.T, s streamed) {
			for _, e := range s.events {
				if strings.Contains(e, "usage") {
					t.Errorf("usage sent: %q", e)
				}
			}
		}},
		{"zeroed usage", Faults{ZeroedUsage: true}, "/v1/completions", completionBody(2, `,"stream_options":{"include_usage":true}`), func(t *testing.T, s streamed) {
			if u := parse(t, s.events[0]).Usage; u == nil || *u != (usageJSON{}) {
				t.Errorf("first chunk %q has no zeroed usage", s.events[0])
			}
		}},
		{"continuous usage", Faults{}, "/v1/completions", completionBody(3, `,"stream_options":{"include_usage":true,"continuous_usage_stats":true}`), func(t *testing.T, s streamed) {
			if u := parse(t, s.events[1]).Usage; u == nil || u.CompletionTokens != 2 {
				t.Errorf("second chunk %q lacks running usage", s.events[1])
			}
		}},
		{"omit done", Faults{OmitDone: true}, "/v1/completions", completionBody(2, ""), func(t *testing.T, s streamed) {
			if slices.Contains(s.events, "[DONE]") {
				t.Errorf("[DONE] sent")
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, srv := start(t, func(c *Config) { c.Faults = tc.f; c.PrefillBase, c.DecodeBase = time.Millisecond, time.Millisecond })
			tc.check(t, stream(t, srv.URL, tc.path, tc.body))
		})
	}
}

func TestNonStreaming(t *testing.T) {
	_, srv := start(t, func(c *Config) { c.Answer = "hello there world" })
	for _, tc := range []struct{ path, body, text string }{
		{"/v1/completions", `{"model":"m","prompt":"a b","max_tokens":4}`, ""},
		{"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"a b"}],"max_tokens":4}`, ""},
	} {
		resp, err := http.Post(srv.URL+tc.path, "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), `"completion_tokens":4`) || !strings.Contains(string(b), "hello there world hello") {
			t.Errorf("%s: %d %s", tc.path, resp.StatusCode, b)
		}
	}
}

var createdRe = regexp.MustCompile(`"created":\d+`)

func TestDeterministic(t *testing.T) {
	texts := func(seed int64) []string {
		_, srv := start(t, func(c *Config) { c.Seed = seed; c.PrefillBase, c.DecodeBase = time.Millisecond, time.Millisecond })
		var out []string
		for range 3 {
			// "created" is the clock's second: two runs may straddle one.
			text := strings.Join(stream(t, srv.URL, "/v1/completions", completionBody(6, "")).events, "")
			out = append(out, createdRe.ReplaceAllString(text, `"created":0`))
		}
		return out
	}
	a, b, c := texts(7), texts(7), texts(8)
	if !slices.Equal(a, b) {
		t.Error("same seed, different texts")
	}
	if slices.Equal(a, c) {
		t.Error("different seeds, same texts")
	}
}

func httpGet(t *testing.T, url string) (int, string, http.Header) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func TestEndpoints(t *testing.T) {
	e, srv := start(t, nil)
	get := func(path string) (int, string, http.Header) { return httpGet(t, srv.URL+path) }
	if code, body, h := get("/v1/models"); code != 200 || !strings.Contains(body, `"id":"m"`) || h.Get("Server") != "llmprobe-sim/0.1.0" {
		t.Errorf("/v1/models: %d %s %v", code, body, h)
	}
	e.SetVersion("0.2.0")
	if _, body, _ := get("/version"); !strings.Contains(body, "0.2.0") {
		t.Errorf("/version after SetVersion: %s", body)
	}
	if code, _, _ := get("/health"); code != 200 {
		t.Errorf("/health: %d", code)
	}
	stream(t, srv.URL, "/v1/completions", completionBody(2, ""))
	if _, body, _ := get("/metrics"); !strings.Contains(body, "vllm:time_to_first_token_seconds_count") || !strings.Contains(body, "vllm:num_requests_running") {
		t.Errorf("/metrics lacks vLLM names:\n%s", body)
	}
	put := func(body string) int {
		req, _ := http.NewRequest(http.MethodPut, srv.URL+"/sim/faults", strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := put(`{"error_rate":1,"error_status":503,"stall_duration":"2s"}`); code != 200 || e.Faults().ErrorStatus != 503 || e.Faults().StallDuration != 2*time.Second {
		t.Errorf("PUT faults: %d %+v", code, e.Faults())
	}
	if code := put(`{"error_rate":2}`); code != 400 {
		t.Errorf("bad faults accepted: %d", code)
	}
	if s := stream(t, srv.URL, "/v1/completions", completionBody(2, "")); s.status != 503 {
		t.Errorf("status %d after faults changed at run time", s.status)
	}
	for body, want := range map[string]int{`{"prompt":"x"}`: 400, `{"model":"other","prompt":"x"}`: 404, `not json`: 400} {
		if s := stream(t, srv.URL, "/v1/completions", body); s.status != want {
			t.Errorf("%s: %d, want %d", body, s.status, want)
		}
	}
}

func TestClientCancelFreesTheBatch(t *testing.T) {
	e, srv := start(t, func(c *Config) { c.DecodeBase = 20 * time.Millisecond })
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/completions", bytes.NewReader([]byte(completionBody(1000, ""))))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	_, _ = resp.Body.Read(buf)
	cancel()
	resp.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for e.Stats().Running != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("still running after the client left: %+v", e.Stats())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if e.Stats().Cancelled != 1 {
		t.Errorf("stats %+v", e.Stats())
	}
}

func TestInvalidConfig(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxBatch = 0
	cfg.Faults.ErrorRate = 3
	cfg.Faults.UsagePlacement = "sideways"
	_, err := New(cfg)
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{"max batch", "error_rate", "usage_placement"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

// Each engine family serves its own metric names and none of vLLM's, and
// identifies itself on its own version endpoint.
func TestEngineFamilies(t *testing.T) {
	cases := []struct {
		engine, versionPath, ownedBy, server string
		metrics                              []string
	}{
		{EngineVLLM, "/version", "vllm", "uvicorn", []string{"vllm:time_to_first_token_seconds_count", "vllm:num_requests_waiting", "vllm:generation_tokens_total"}},
		{EngineSGLang, "/get_server_info", "sglang", "uvicorn", []string{"sglang:time_to_first_token_seconds_count", "sglang:num_queue_reqs", "sglang:gen_throughput", "sglang:generation_tokens_total"}},
		{EngineTGI, "/info", "m", "", []string{"tgi_request_queue_duration_count", "tgi_queue_size", "tgi_batch_current_size", "tgi_request_mean_time_per_token_duration_count", "tgi_request_generated_tokens_sum"}},
		{EngineLlamaCPP, "/props", "llamacpp", "llama.cpp", []string{"llamacpp:tokens_predicted_total", "llamacpp:tokens_predicted_seconds_total", "llamacpp:requests_processing", "llamacpp:predicted_tokens_seconds"}},
	}
	for _, tc := range cases {
		t.Run(tc.engine, func(t *testing.T) {
			_, srv := start(t, func(c *Config) { c.Engine, c.Version = tc.engine, "1.2.3" })
			get := func(path string) (int, string, http.Header) { return httpGet(t, srv.URL+path) }
			if _, body, h := get("/v1/models"); !strings.Contains(body, `"owned_by":"`+tc.ownedBy+`"`) || h.Get("Server") != tc.server {
				t.Errorf("/v1/models: %s, Server %q", body, h.Get("Server"))
			}
			if code, body, _ := get(tc.versionPath); code != 200 || !strings.Contains(body, "1.2.3") {
				t.Errorf("%s: %d %s", tc.versionPath, code, body)
			}
			stream(t, srv.URL, "/v1/completions", completionBody(3, ""))
			_, body, _ := get("/metrics")
			for _, name := range tc.metrics {
				m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `(?:\{[^}]*\})? (\S+)$`).FindStringSubmatch(body)
				if m == nil {
					t.Errorf("/metrics has no %s:\n%s", name, body)
					continue
				}
				// What the request counted is above 0; gauges only need to be there.
				counted := strings.HasSuffix(name, "_total") || strings.HasSuffix(name, "_count") || strings.HasSuffix(name, "_sum")
				if v, err := strconv.ParseFloat(m[1], 64); err != nil || (counted && v <= 0) {
					t.Errorf("%s = %s after a request", name, m[1])
				}
			}
			if tc.engine != EngineVLLM && strings.Contains(body, "vllm:") {
				t.Errorf("%s serves vLLM names:\n%s", tc.engine, body)
			}
		})
	}
	if _, err := New(func() Config { c := DefaultConfig(); c.Engine = "triton"; return c }()); err == nil || !strings.Contains(err.Error(), "sglang") {
		t.Errorf("unknown engine: %v", err)
	}
}

// Per-request timings ride where the engines put them: vLLM's metrics on
// the final usage chunk, only when started with per-request metrics and
// asked with include_metrics (and include_usage); llama.cpp's timings on the
// last chunk, always. Their figures are the engine's own: prefill is the
// first step's cost, queue the wait behind a full batch.
func TestPerRequestTimings(t *testing.T) {
	type timed struct {
		Metrics *persona.RequestMetrics `json:"metrics"`
		Timings *persona.LlamaTimings   `json:"timings"`
		Usage   *usageJSON              `json:"usage"`
	}
	last := func(s streamed) (timed, int) {
		var out timed
		at := -1
		for i, ev := range s.events {
			var c timed
			if json.Unmarshal([]byte(ev), &c) == nil && (c.Metrics != nil || c.Timings != nil) {
				out, at = c, i
			}
		}
		return out, at
	}
	usage := `,"stream_options":{"include_usage":true}`
	slow := func(c *Config) {
		c.PrefillBase, c.PrefillPerToken, c.DecodeBase, c.DecodePerSeq, c.MaxBatch = 30*time.Millisecond, 0, 5*time.Millisecond, 0, 1
	}

	_, srv := start(t, slow)
	s := stream(t, srv.URL, "/v1/chat/completions", chatBody(3, usage+`,"include_metrics":true`))
	got, at := last(s)
	if got.Metrics == nil || got.Usage == nil || at != len(s.events)-2 {
		t.Fatalf("metrics %+v on event %d of %d, want them on the final usage chunk", got.Metrics, at, len(s.events))
	}
	// Wall-clock figures of a real scheduler: a busy machine makes steps
	// late, so the bounds are wide; a wrong field is far outside them.
	if m := got.Metrics; m.TimeToFirstTokenMs < 25 || m.TimeToFirstTokenMs > 90 || m.GenerationTimeMs < 5 || m.GenerationTimeMs > 60 || m.QueueTimeMs < 0 || m.QueueTimeMs > 25 {
		t.Errorf("metrics %+v, want prefill ~30ms, generation ~10ms (two 5ms steps), no queue", m)
	}
	for name, body := range map[string]string{
		"without include_metrics": chatBody(3, usage),
		"without include_usage":   chatBody(3, `,"include_metrics":true`),
	} {
		if got, _ := last(stream(t, srv.URL, "/v1/chat/completions", body)); got.Metrics != nil {
			t.Errorf("%s: metrics sent: %+v", name, got.Metrics)
		}
	}

	// Two requests at once behind a batch of one: the second waits the first out.
	var wg sync.WaitGroup
	var queues [2]float64
	for i := range 2 {
		wg.Go(func() {
			got, _ := last(stream(t, srv.URL, "/v1/completions", completionBody(3, usage+`,"include_metrics":true`)))
			if got.Metrics != nil {
				queues[i] = got.Metrics.QueueTimeMs
			}
		})
	}
	wg.Wait()
	if w := max(queues[0], queues[1]); w < 30 {
		t.Errorf("queue times %v ms: one request should have waited the other's ~40ms out", queues)
	}

	_, off := start(t, func(c *Config) { slow(c); c.PerRequestMetrics = false })
	if got, _ := last(stream(t, off.URL, "/v1/chat/completions", chatBody(3, usage+`,"include_metrics":true`))); got.Metrics != nil {
		t.Errorf("per-request metrics off, but sent: %+v", got.Metrics)
	}

	_, llama := start(t, func(c *Config) { slow(c); c.Engine = EngineLlamaCPP })
	s = stream(t, llama.URL, "/v1/completions", completionBody(3, ""))
	got, at = last(s)
	if got.Timings == nil || at != len(s.events)-2 || got.Timings.PredictedN != 3 || got.Timings.PromptN != 4 {
		t.Fatalf("llama.cpp timings %+v on event %d of %d, want them on the last chunk with 3 predicted, 4 prompt tokens", got.Timings, at, len(s.events))
	}
	if got.Timings.PromptMs < 25 || got.Timings.PromptMs > 90 {
		t.Errorf("prompt_ms %v, want ~30", got.Timings.PromptMs)
	}
}
