package collector

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/prober/transport"
)

func testConfig(t *testing.T, ttft string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(`targets: [{name: a, url: "http://x:1"}, {name: b, url: "http://y:1"}]
scenarios:
  - name: s
    slo: {ttft: `+ttft+`, tpot: 42ms, stall: 3s, target_ratio: 0.95}
`), "test")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func successResult(target string) *prober.Result {
	return &prober.Result{
		Target: target, Model: "m", Scenario: "s", Traffic: prober.TrafficCanary,
		Sched: time.Unix(1000, 0), Outcome: prober.OutcomeSuccess, HTTPStatus: 200,
		TTFT: 300 * time.Millisecond, E2E: time.Second, TPOT: 20 * time.Millisecond,
		ITL:          []time.Duration{10 * time.Millisecond, 30 * time.Millisecond},
		OutputTokens: 3, TokenSource: prober.TokensFromUsage, OutputChunks: 3,
		PromptTokensRequested: 100, PromptTokensReported: 110,
		Checks: []prober.Check{{Objective: "ttft", Threshold: 300 * time.Millisecond, Met: false}, {Objective: "tpot", Threshold: 42 * time.Millisecond, Met: true}},
		Good:   false,
	}
}

func histogramOf(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) *dto.Histogram {
	t.Helper()
	m := findMetric(t, reg, name, labels)
	if m == nil {
		t.Fatalf("no histogram %s %v", name, labels)
	}
	return m.GetHistogram()
}

func TestBucketsIncludeThresholdsAndNative(t *testing.T) {
	p := NewProbe(true)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(p)
	p.Configure(testConfig(t, "300ms"))
	p.Observe(successResult("a"))

	h := histogramOf(t, reg, "llmprobe_time_to_first_token_seconds", map[string]string{"target": "a"})
	bounds := upperBounds(h)
	if !containsFloat(bounds, 0.3) || !containsFloat(bounds, 0.05) || !containsFloat(bounds, 10) {
		t.Errorf("TTFT buckets %v lack the 300ms threshold or the grid's range", bounds)
	}
	if h.GetSchema() == 0 && len(h.GetPositiveSpan()) == 0 {
		t.Errorf("no native histogram part: schema %d spans %v", h.GetSchema(), h.GetPositiveSpan())
	}
	itl := histogramOf(t, reg, "llmprobe_inter_token_latency_seconds", map[string]string{"target": "a"})
	if itl.GetSampleCount() != 2 {
		t.Errorf("ITL samples = %d, want one per token gap", itl.GetSampleCount())
	}
	if b := upperBounds(itl); !containsFloat(b, 3) {
		t.Errorf("ITL buckets %v lack the stall threshold", b)
	}
	if b := upperBounds(histogramOf(t, reg, "llmprobe_time_per_output_token_seconds", map[string]string{"target": "a"})); !containsFloat(b, 0.042) {
		t.Errorf("TPOT buckets %v lack the tpot threshold", b)
	}

	// A new threshold rebuilds the buckets, and that histogram starts again.
	p.Configure(testConfig(t, "333ms"))
	p.Observe(successResult("a"))
	h = histogramOf(t, reg, "llmprobe_time_to_first_token_seconds", map[string]string{"target": "a"})
	if bounds = upperBounds(h); !containsFloat(bounds, 0.333) || containsFloat(bounds, 0.3) || h.GetSampleCount() != 1 {
		t.Errorf("after reload: buckets %v, %d samples", bounds, h.GetSampleCount())
	}
	if itl := histogramOf(t, reg, "llmprobe_inter_token_latency_seconds", map[string]string{"target": "a"}); itl.GetSampleCount() != 4 {
		t.Errorf("ITL samples after a reload that kept its buckets = %d, want 4", itl.GetSampleCount())
	}
}

func upperBounds(h *dto.Histogram) []float64 {
	var out []float64
	for _, b := range h.GetBucket() {
		out = append(out, b.GetUpperBound())
	}
	return out
}

func containsFloat(s []float64, v float64) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestCountersAndSLOChecks(t *testing.T) {
	p := NewProbe(true)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(p)
	p.Configure(testConfig(t, "300ms"))
	p.Observe(successResult("a"))
	rejected := &prober.Result{Target: "a", Model: "m", Scenario: "s", Traffic: prober.TrafficCanary, Sched: time.Unix(1001, 0),
		Outcome: prober.OutcomeRejected, HTTPStatus: 429,
		Checks: []prober.Check{{Objective: "ttft"}, {Objective: "tpot"}}}
	p.Observe(rejected)

	want := `
# HELP llmprobe_requests_total Requests sent, by outcome.
# TYPE llmprobe_requests_total counter
llmprobe_requests_total{model="m",outcome="connection_error",scenario="s",target="a",traffic="canary"} 0
llmprobe_requests_total{model="m",outcome="http_error",scenario="s",target="a",traffic="canary"} 0
llmprobe_requests_total{model="m",outcome="rejected",scenario="s",target="a",traffic="canary"} 1
llmprobe_requests_total{model="m",outcome="stream_error",scenario="s",target="a",traffic="canary"} 0
llmprobe_requests_total{model="m",outcome="success",scenario="s",target="a",traffic="canary"} 1
llmprobe_requests_total{model="m",outcome="timeout",scenario="s",target="a",traffic="canary"} 0
# HELP llmprobe_slo_checks_total Objective checks per request; a failed request misses every objective.
# TYPE llmprobe_slo_checks_total counter
llmprobe_slo_checks_total{model="m",objective="stall",result="met",scenario="s",target="a",traffic="canary"} 0
llmprobe_slo_checks_total{model="m",objective="stall",result="missed",scenario="s",target="a",traffic="canary"} 0
llmprobe_slo_checks_total{model="m",objective="tpot",result="met",scenario="s",target="a",traffic="canary"} 1
llmprobe_slo_checks_total{model="m",objective="tpot",result="missed",scenario="s",target="a",traffic="canary"} 1
llmprobe_slo_checks_total{model="m",objective="ttft",result="met",scenario="s",target="a",traffic="canary"} 0
llmprobe_slo_checks_total{model="m",objective="ttft",result="missed",scenario="s",target="a",traffic="canary"} 2
# HELP llmprobe_prompt_tokens_total Prompt tokens of successful requests, as the server reported them (requested count when it reported none).
# TYPE llmprobe_prompt_tokens_total counter
llmprobe_prompt_tokens_total{model="m",scenario="s",target="a",traffic="canary"} 110
# HELP llmprobe_slo_target_ratio Configured ratio of requests that must meet each objective; objective="quality" is slo.quality_ratio, the share of checked answers that must pass their checks.
# TYPE llmprobe_slo_target_ratio gauge
llmprobe_slo_target_ratio{objective="stall",scenario="s"} 0.95
llmprobe_slo_target_ratio{objective="tpot",scenario="s"} 0.95
llmprobe_slo_target_ratio{objective="ttft",scenario="s"} 0.95
# HELP llmprobe_probe_last_timestamp_seconds When the last request of this series was due.
# TYPE llmprobe_probe_last_timestamp_seconds gauge
llmprobe_probe_last_timestamp_seconds{model="m",scenario="s",target="a",traffic="canary"} 1001
# HELP llmprobe_good_requests_total Requests that succeeded and met every objective of their scenario.
# TYPE llmprobe_good_requests_total counter
llmprobe_good_requests_total{model="m",scenario="s",target="a",traffic="canary"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"llmprobe_requests_total", "llmprobe_slo_checks_total", "llmprobe_prompt_tokens_total",
		"llmprobe_slo_target_ratio", "llmprobe_probe_last_timestamp_seconds", "llmprobe_good_requests_total", "llmprobe_prompt_cached_tokens_total"); err != nil {
		t.Error(err)
	}
	// Rejected requests never reach latency histograms: overload must not look fast.
	if h := histogramOf(t, reg, "llmprobe_time_to_first_token_seconds", map[string]string{"target": "a"}); h.GetSampleCount() != 1 {
		t.Errorf("TTFT samples = %d, want only the successful request", h.GetSampleCount())
	}
}

func TestRemovedTargetAndChangedModelSeriesGo(t *testing.T) {
	p := NewProbe(true)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(p)
	cfg := testConfig(t, "300ms")
	p.Configure(cfg)
	p.Observe(successResult("a"))
	p.Observe(successResult("b"))

	r := successResult("a")
	r.Model = "m2"
	p.Observe(r)
	if n := testutil.CollectAndCount(p, "llmprobe_requests_total"); n != 12 {
		t.Errorf("requests_total series = %d, want 12 (6 outcomes x targets a/m2 and b/m)", n)
	}
	cfg.Targets = cfg.Targets[:1]
	p.Configure(cfg)
	if n := testutil.CollectAndCount(p, "llmprobe_requests_total"); n != 6 {
		t.Errorf("requests_total series after removing b = %d, want 6", n)
	}
	// A request of b that was in flight when b was removed finishes late.
	p.Observe(successResult("b"))
	if n := testutil.CollectAndCount(p, "llmprobe_requests_total"); n != 6 {
		t.Errorf("requests_total series after a late result of removed b = %d, want 6", n)
	}
}

func TestInFlight(t *testing.T) {
	p := NewProbe(true)
	p.Configure(testConfig(t, "1s"))
	p.Started("a", "s", "canary")
	p.Started("a", "s", "canary")
	p.Finished("a", "s", "canary")
	want := `
# HELP llmprobe_in_flight_requests Requests sent and not yet finished.
# TYPE llmprobe_in_flight_requests gauge
llmprobe_in_flight_requests{scenario="s",target="a",traffic="canary"} 1
`
	if err := testutil.CollectAndCompare(p, strings.NewReader(want), "llmprobe_in_flight_requests"); err != nil {
		t.Error(err)
	}
}

// Where SLOs live the grids are R10 (R5 for ITL, one sample per token):
// neighbours at most one step apart, so histogram_quantile's linear
// interpolation cannot be off by more than that step, and the boundaries
// print as the decimals they are.
func TestBucketResolutionWhereSLOsLive(t *testing.T) {
	for _, c := range []struct {
		name     string
		grid     grid
		lo, hi   float64
		maxRatio float64
	}{
		{"ttft", ttftGrid, 0.05, 2.5, 1.29},
		{"tpot", tpotGrid, 0.01, 0.2, 1.29},
		{"itl", itlGrid, 0.004, 0.63, 1.6},
	} {
		b := c.grid.bounds
		if !containsFloat(b, c.lo) || !containsFloat(b, c.hi) {
			t.Errorf("%s buckets %v do not start at %g and end at %g", c.name, b, c.lo, c.hi)
		}
		for i := 1; i < len(b); i++ {
			prev, v := b[i-1], b[i]
			if v <= prev {
				t.Errorf("%s buckets are not increasing at %g, %g", c.name, prev, v)
			}
			if prev >= c.lo && v <= c.hi && v/prev > c.maxRatio {
				t.Errorf("%s buckets %g and %g are %.0f%% apart, want at most %.0f%%", c.name, prev, v, 100*(v/prev-1), 100*(c.maxRatio-1))
			}
			if s := strconv.FormatFloat(v, 'g', -1, 64); len(s) > 7 {
				t.Errorf("%s bucket %s is not a short decimal", c.name, s)
			}
		}
	}
}

// A threshold takes the place of the grid point within half a step that
// no threshold holds yet, else it is added; one on a grid point keeps it.
func TestThresholdsJoinTheGrid(t *testing.T) {
	grid := grid{[]float64{0.1, 0.2, 0.4, 0.8, 10}, 2}
	for _, c := range []struct {
		thresholds, want []float64
	}{
		{nil, []float64{0.1, 0.2, 0.4, 0.8, 10}},
		{[]float64{0.4}, []float64{0.1, 0.2, 0.4, 0.8, 10}},
		{[]float64{0.25}, []float64{0.1, 0.25, 0.4, 0.8, 10}},                // replaces 0.2
		{[]float64{0.25, 0.22}, []float64{0.1, 0.22, 0.25, 0.4, 0.8, 10}},    // 0.2 taken: the second is added
		{[]float64{0.3, 0.3, 0.2}, []float64{0.1, 0.2, 0.3, 0.8, 10}},        // 0.2 is a threshold already; 0.3 takes 0.4
		{[]float64{3}, []float64{0.1, 0.2, 0.4, 0.8, 3, 10}},                 // in a coarse tail: added
		{[]float64{0.001, 60}, []float64{0.001, 0.1, 0.2, 0.4, 0.8, 10, 60}}, // outside: added
	} {
		if got := grid.withThresholds(c.thresholds); !slices.Equal(got, c.want) {
			t.Errorf("thresholds %v: %v, want %v", c.thresholds, got, c.want)
		}
	}
}

// Requests that reasoned get the reasoning series; a series none of whose
// requests reasoned has none of their lines, so a scenario without a
// reasoning model leaves the page as it was.
func TestReasoningSeries(t *testing.T) {
	p := NewProbe(true)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(p)
	cfg, err := config.Parse([]byte(`targets: [{name: a, url: "http://x:1"}, {name: b, url: "http://y:1"}]
scenarios:
  - name: s
    slo: {ttft: 300ms, ttft_answer: 4s}
`), "test")
	if err != nil {
		t.Fatal(err)
	}
	p.Configure(cfg)
	p.Observe(successResult("a"))
	for range 2 {
		r := successResult("b")
		r.OutputTokens = 10
		r.TTFTReasoning, r.TTFTAnswer, r.ReasoningTokens, r.AnswerTokens, r.ReasoningSource = 300*time.Millisecond, 3*time.Second, 7, 3, prober.TokensFromUsage
		p.Observe(r)
	}
	want := `
# HELP llmprobe_reasoning_output_tokens_total Output tokens of successful requests that reasoned, by kind: reasoning or answer.
# TYPE llmprobe_reasoning_output_tokens_total counter
llmprobe_reasoning_output_tokens_total{kind="answer",model="m",scenario="s",target="b",traffic="canary"} 6
llmprobe_reasoning_output_tokens_total{kind="reasoning",model="m",scenario="s",target="b",traffic="canary"} 14
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "llmprobe_reasoning_output_tokens_total"); err != nil {
		t.Error(err)
	}
	answer := histogramOf(t, reg, "llmprobe_time_to_first_answer_token_seconds", map[string]string{"target": "b"})
	if answer.GetSampleCount() != 2 || answer.GetSampleSum() != 6 || !containsFloat(upperBounds(answer), 4) {
		t.Errorf("answer histogram: %d samples, sum %g, buckets %v; want 2, 6 and the 4s threshold", answer.GetSampleCount(), answer.GetSampleSum(), upperBounds(answer))
	}
	// The first reasoning token is the first output token: TTFT's.
	if h := histogramOf(t, reg, "llmprobe_time_to_first_token_seconds", map[string]string{"target": "b"}); h.GetSampleCount() != 2 {
		t.Errorf("TTFT of the requests that reasoned: %d samples, want 2", h.GetSampleCount())
	}
	for _, name := range []string{"llmprobe_time_to_first_answer_token_seconds", "llmprobe_reasoning_output_tokens_total"} {
		if m := findMetric(t, reg, name, map[string]string{"target": "a"}); m != nil {
			t.Errorf("%s has a series for target a, which never reasoned", name)
		}
	}
	// The page of a probe without reasoning names none of the families.
	plain := NewProbe(true)
	plain.Configure(cfg)
	plain.Observe(successResult("a"))
	for _, accept := range []string{"", acceptOpenMetrics} {
		if page := scrape(t, plain, accept); strings.Contains(page, "reasoning") || strings.Contains(page, "answer_token") {
			t.Errorf("a page without reasoning has reasoning lines:\n%s", page)
		}
	}
}

// A conversation's successful requests land in the turn series by turn,
// native histograms only (32 turns of classic buckets would be most of a
// page); a turn past workload.MaxTurns (never configured) and a request of no
// conversation make no series.
func TestConversationTurnSeries(t *testing.T) {
	p := NewProbe(true)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(p)
	cfg, err := config.Parse([]byte(`targets: [{name: a, url: "http://x:1"}]
scenarios:
  - name: s
    slo: {ttft: 333ms}
    conversation: {turns: 3}
`), "test")
	if err != nil {
		t.Fatal(err)
	}
	p.Configure(cfg)
	for _, turn := range []int{0, 1, 2, 2, config.MaxTurns + 1} {
		r := successResult("a")
		r.Turn = turn
		p.Observe(r)
	}
	failed := successResult("a")
	failed.Turn, failed.Outcome = 3, prober.OutcomeTimeout
	p.Observe(failed)
	for turn, want := range map[string]uint64{"1": 1, "2": 2} {
		h := histogramOf(t, reg, "llmprobe_conversation_ttft_seconds", map[string]string{"turn": turn})
		if h.GetSampleCount() != want || len(upperBounds(h)) != 0 || len(h.GetPositiveSpan()) == 0 {
			t.Errorf("turn %s: %d samples, buckets %v, native spans %v; want %d, no classic buckets, a native histogram", turn, h.GetSampleCount(), upperBounds(h), h.GetPositiveSpan(), want)
		}
	}
	for _, turn := range []string{"0", "3", "33"} {
		if m := findMetric(t, reg, "llmprobe_conversation_ttft_seconds", map[string]string{"turn": turn}); m != nil {
			t.Errorf("turn %s has a series", turn)
		}
	}
}

// BenchmarkObserve records one successful 128-token request, with a request
// id (its exemplars) and without: the prober's cost per result.
//
//	go test -run '^$' -bench Observe -benchmem ./collector/
func BenchmarkObserve(b *testing.B) {
	cfg, err := config.Parse([]byte(`targets: [{name: a, url: "http://x:1"}]
scenarios: [{name: s, slo: {ttft: 300ms, tpot: 42ms}}]
`), "bench")
	if err != nil {
		b.Fatal(err)
	}
	for _, id := range []string{"", "0af7651916cd43dd8448eb211c80319c"} {
		b.Run(fmt.Sprintf("exemplars=%v", id != ""), func(b *testing.B) {
			p := NewProbe(true)
			p.Configure(cfg)
			r := successResult("a")
			r.RequestID = id
			r.ITL = make([]time.Duration, 127)
			for i := range r.ITL {
				r.ITL[i] = time.Duration(10+i%40) * time.Millisecond
			}
			for b.Loop() {
				p.Observe(r)
			}
		})
	}
}

// Retries are counted per target and reason, from zero for every configured
// target, and leave with their target.
func TestRetriesCounted(t *testing.T) {
	p := NewProbe(true)
	cfg := testConfig(t, "300ms")
	p.Configure(cfg)
	if n := testutil.CollectAndCount(p, "llmprobe_request_retries_total"); n != 6 {
		t.Errorf("%d retry series before any request, want 6 (3 reasons x targets a and b)", n)
	}
	retried := successResult("a")
	retried.Timings.Retry = transport.RetryEOF
	p.Observe(retried)
	p.Observe(retried)
	p.Observe(successResult("a"))
	if v := testutil.ToFloat64(p.retries.WithLabelValues("a", transport.RetryEOF)); v != 2 {
		t.Errorf("retries of a (eof) = %g, want 2", v)
	}
	cfg.Targets = cfg.Targets[:1]
	p.Configure(cfg)
	if n := testutil.CollectAndCount(p, "llmprobe_request_retries_total"); n != 3 {
		t.Errorf("%d retry series after removing b, want 3", n)
	}
}
