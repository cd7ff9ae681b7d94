package web

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/llmprobe/llmprobe/enginemetrics"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/store"
	"github.com/llmprobe/llmprobe/stats"
	"github.com/llmprobe/llmprobe/target"
)

// The report page shows the engine section in each of its states: absent
// (an old report: n/a), a failed scrape with its reason, and figures next
// to the client's with the difference.
func TestReportPageEngineSection(t *testing.T) {
	v, c, s, lo, hi := 0.120, 10.0, 0.100, 0.1, 0.25
	// Client 120 ms against a server p50 in the bucket 100–250 ms: the
	// difference is anywhere from −130 to +20 ms, an interval.
	d := enginemetrics.Diff(v, enginemetrics.Quantile{Name: "p50", Value: s, BucketLower: lo, BucketUpper: &hi})
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	base := func() *report.Report {
		return &report.Report{ID: "b-1", Burst: "b", Target: "t", Engine: "vllm", EngineVersion: "0.11.0", Latency: map[string]stats.Summary{"ttft": {Count: 10, P50: 0.12}}}
	}
	cases := map[string]struct {
		engine *report.EngineMetrics
		want   []string
	}{
		"old report": {nil, []string{"n/a: no engine metrics in this report"}},
		"501": {&report.EngineMetrics{Window: enginemetrics.Window{URL: "http://e/metrics", Scope: enginemetrics.Scope,
			Before: &enginemetrics.Page{Time: at, Error: "HTTP 501 Not Implemented: the engine serves no metrics"},
			Error:  "the scrape before failed: HTTP 501 Not Implemented: the engine serves no metrics"}},
			[]string{"n/a: the scrape before failed: HTTP 501 Not Implemented", "failed: HTTP 501"}},
		"figures": {&report.EngineMetrics{Window: enginemetrics.Window{URL: "http://e/metrics", Family: "vllm", FamilySource: "configured", Scope: enginemetrics.Scope,
			Before: &enginemetrics.Page{Time: at}, After: &enginemetrics.Page{Time: at.Add(time.Minute)},
			Figures: []enginemetrics.Figure{
				{Metric: "ttft", Source: "vllm:time_to_first_token_seconds", Count: &c, Mean: &s, Quantiles: []enginemetrics.Quantile{{Name: "p50", Value: s, BucketLower: lo, BucketUpper: &hi}}},
				{Metric: "tpot", NA: "the page has no vllm:request_time_per_output_token_seconds"},
			}},
			ClientVsServer: []report.EngineComparison{{Metric: "ttft", Quantile: "p50", Client: &v, Server: &s, Difference: d.Value, DifferenceLower: d.Lower, DifferenceUpper: d.Upper, Resolution: d.Resolution, ServerBucketLower: &lo, ServerBucketUpper: &hi}}},
			[]string{"vllm from http://e/metrics", "vllm:time_to_first_token_seconds", `<td class="num">100–250ms</td>`, "≈100.0ms in 100–250ms", "n/a: the page has no vllm:request_time_per_output_token_seconds", "between −130.0 and &#43;20.0ms", "bucket 100–250ms", "warmup and other clients"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := base()
			r.EngineMetrics = tc.engine
			var buf bytes.Buffer
			if err := WriteReport(&buf, r); err != nil {
				t.Fatal(err)
			}
			page := buf.String()
			// The summary names the engine the report measured, whatever
			// the engine-metrics section holds.
			if !strings.Contains(page, "<dt>engine</dt><dd>vllm 0.11.0</dd>") {
				t.Errorf("the summary's engine row is not the target's engine and version:\n%s", page[strings.Index(page, "<dt>engine</dt>"):][:300])
			}
			i := strings.Index(page, `id="engine-metrics"`)
			if i < 0 {
				t.Fatal("no engine section")
			}
			section := page[i:]
			section = section[:strings.Index(section, "</section>")]
			for _, w := range tc.want {
				if !strings.Contains(section, w) {
					t.Errorf("section lacks %q:\n%s", w, section)
				}
			}
		})
	}
}

// The landing page's target row says how the last read of the engine's
// page went, with the reason when it failed.
func TestEngineMetricsText(t *testing.T) {
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	mean, q, lo, hi := 0.05, 0.2, 0.1, 0.25
	accept, length, transfers := 0.7, 3.1, 12.0
	for _, c := range []struct {
		st    target.EngineState
		want  string
		class string
	}{
		{target.EngineState{}, "engine metrics: not read yet", "muted"},
		{target.EngineState{Last: &enginemetrics.Page{Time: at, Error: "engine down: GET http://e/metrics: connection refused"}},
			"engine metrics: read failed 10:00:00: engine down: GET http://e/metrics: connection refused", "bad"},
		{target.EngineState{Last: &enginemetrics.Page{Time: at, Duration: 0.012}}, "engine metrics: read 10:00:00 in 12.0ms; figures after the next read", "ok"},
		{target.EngineState{Last: &enginemetrics.Page{Time: at}, Window: &enginemetrics.Window{Error: enginemetrics.ErrRestarted}}, "n/a: engine restarted between scrapes: no delta", "muted"},
		{target.EngineState{Last: &enginemetrics.Page{Time: at}, Window: &enginemetrics.Window{Family: "vllm", Figures: []enginemetrics.Figure{
			{Metric: "ttft", Mean: &mean, Quantiles: []enginemetrics.Quantile{{Name: "p99", Value: q, BucketLower: lo, BucketUpper: &hi}}},
			{Metric: "queue", NA: "x"}, {Metric: "tpot", Mean: &mean}}}}, "vllm, server-wide over the last interval: ttft mean 50.0 ms (p99 in 100–250ms), tpot mean 50.0 ms", "ok"},
		{target.EngineState{Last: &enginemetrics.Page{Time: at}, Window: &enginemetrics.Window{Family: "vllm", SpecDecode: &enginemetrics.SpecDecode{NA: "no draft model: the page has no vllm:spec_decode_num_drafts_total"}}},
			"; speculative decoding: n/a (no draft model: the page has no vllm:spec_decode_num_drafts_total)", "ok"},
		{target.EngineState{Last: &enginemetrics.Page{Time: at}, Window: &enginemetrics.Window{Family: "sglang", SpecDecode: &enginemetrics.SpecDecode{AcceptanceRate: &accept, MeanAcceptanceLength: &length, Source: "the engine's own averages"}}},
			"; speculative decoding: acceptance rate 70.0%, mean acceptance length 3.10 tokens a step (the engine's own averages)", "ok"},
		{target.EngineState{Last: &enginemetrics.Page{Time: at}, Window: &enginemetrics.Window{Family: "vllm", KVTransfer: &enginemetrics.Figure{Metric: "kv_transfer", Mean: &mean, Count: &transfers}}},
			"; kv transfer mean 50.0 ms over 12 transfers (disaggregated prefill, the engine's aggregate)", "ok"},
	} {
		text, class := engineMetricsText(c.st)
		if !strings.Contains(text, c.want) || class != c.class {
			t.Errorf("%q (%s), want %q (%s)", text, class, c.want, c.class)
		}
	}
}

// On the landing page, a target whose engine page fails shows why.
func TestLandingShowsEngineRead(t *testing.T) {
	sim, _ := testkit.StartSim(t, nil)
	off := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "metrics off", http.StatusNotImplemented)
	}))
	defer off.Close()
	cfg := testkit.Config(t, `targets: [{name: t, url: "`+sim.URL+`", model: m, engine_metrics: {url: "`+off.URL+`/metrics"}}]
scenarios: [{name: s}]
`)
	targets := target.NewSet(log.NewNopLogger())
	defer targets.Stop()
	targets.Apply(context.Background(), cfg)
	mux := http.NewServeMux()
	New(Options{Targets: targets, Store: store.New("", nil), TelemetryPath: "/metrics"}).Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	testkit.WaitUntil(t, "the landing page to show the failed engine read", 5*time.Second, func() bool {
		_, page := get(t, srv.URL, "/")
		return strings.Contains(page, `<div class="engine-metrics bad">engine metrics: read failed`) &&
			strings.Contains(page, "HTTP 501 Not Implemented: the engine serves no metrics")
	})
}
