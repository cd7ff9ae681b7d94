package daemon

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/prober/transport"
	"github.com/llmprobe/llmprobe/prompt"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/sim"
)

// The pages of the render benchmark and the series budget: 10 targets × 5
// scenarios of canaries with three objectives each (the budget's page),
// and the scale issue's heavier one, with a fourth objective (stall) and
// burst traffic on every pair; every histogram populated.
const (
	renderTargets   = 10
	renderScenarios = 5
	// Results per (target, scenario, traffic): enough to spread samples
	// over the buckets.
	renderResults = 40
	renderModel   = "llama-3.1-8b-instruct"
)

var renderScenarioNames = []string{"chat-short", "chat-long-prompt", "code-completion", "summarize", "reasoning"}

// renderSetup is which page to build.
type renderSetup struct {
	stall  bool // a fourth objective
	bursts bool // a burst per target over every scenario, and its traffic
	opts   Options
}

// renderConfig is the configuration of a render setup: every scenario has
// its own thresholds, as real ones do, so each adds boundaries to the
// buckets.
func renderConfig(url string, setup renderSetup) string {
	var b strings.Builder
	b.WriteString("targets:\n")
	for i := range renderTargets {
		fmt.Fprintf(&b, "  - {name: prod-vllm-%d, url: %q, model: %s}\n", i, url, renderModel)
	}
	b.WriteString("scenarios:\n")
	for i, name := range renderScenarioNames {
		fmt.Fprintf(&b, "  - name: %s\n    slo: {ttft: %dms, tpot: %dms, e2e: %ds", name, 300+100*i, 30+5*i, 5+5*i)
		if setup.stall {
			fmt.Fprintf(&b, ", stall: %dms", 800+100*i)
		}
		b.WriteString(", target_ratio: 0.99}\n")
		if i == 0 {
			b.WriteString("    quality: {contains: \" \"}\n")
		}
	}
	if !setup.bursts {
		return b.String()
	}
	b.WriteString("bursts:\n")
	for i := range renderTargets {
		fmt.Fprintf(&b, "  - name: load-prod-vllm-%d\n    target: prod-vllm-%d\n    scenarios: [", i, i)
		for j, name := range renderScenarioNames {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "{scenario: %s}", name)
		}
		b.WriteString("]\n    arrival: {rate: 10}\n    requests: 200\n    schedule: {every: 1h}\n")
		b.WriteString("    max_regression: [{metric: ttft, quantile: p99, max_increase: 0.2}, {metric: tpot, quantile: p50, max_increase: 0.2}]\n")
	}
	return b.String()
}

// renderResult is one finished request, its figures drawn so that the
// samples spread over the buckets: lognormal TTFT and token gaps around
// the scenario's thresholds, a few failures of each kind.
func renderResult(rng *rand.Rand, target string, sc config.Scenario, scIndex int, traffic string, sched time.Time) *prober.Result {
	logn := func(median float64, sigma float64) time.Duration {
		return time.Duration(median * math.Exp(sigma*rng.NormFloat64()) * float64(time.Second))
	}
	r := &prober.Result{Target: target, Model: renderModel, Scenario: sc.Name, Traffic: traffic, Sched: sched,
		DispatchDelay: logn(0.0003, 1), PromptTokensRequested: 128 << scIndex,
		RequestID: fmt.Sprintf("%016x%016x", rng.Uint64(), rng.Uint64())} // an exemplar on each bucket it reaches
	switch x := rng.IntN(100); {
	case x < 3:
		r.Outcome, r.HTTPStatus, r.Phase, r.Reason = prober.OutcomeRejected, 429, "headers", "http_status"
	case x < 5:
		r.Outcome, r.Phase, r.Reason = prober.OutcomeTimeout, "stream", "deadline"
	case x < 6:
		r.Outcome, r.Phase, r.Reason = prober.OutcomeConnectionError, "connect", "connection_refused"
	case x < 7:
		r.Outcome, r.HTTPStatus, r.Phase, r.Reason = prober.OutcomeStreamError, 200, "stream", "stream_cut"
	default:
		r.Outcome, r.HTTPStatus = prober.OutcomeSuccess, 200
	}
	if r.HTTPStatus != 0 {
		r.Timings = transport.Timings{FirstByte: logn(0.005, 0.5), ConnReused: rng.IntN(10) > 0}
		r.Timings.TTFB = r.DispatchDelay + r.Timings.FirstByte
	}
	if r.Outcome == prober.OutcomeSuccess {
		r.TTFT = r.Timings.TTFB + logn(0.15*float64(scIndex+1), 0.6)
		// The split an engine with per-request timings gives: queue, prefill, the rest.
		server := r.TTFT - r.Timings.TTFB
		r.TTFTParts = []prober.TTFTPart{{Component: prober.ComponentDispatch, D: r.DispatchDelay}, {Component: prober.ComponentConnect, D: r.Timings.FirstByte},
			{Component: prober.ComponentEngineQueue, D: server / 5}, {Component: prober.ComponentEnginePrefill, D: server * 7 / 10}, {Component: prober.ComponentNetwork, D: server - server/5 - server*7/10}}
		if traffic == prober.TrafficBurst {
			r.TTFTParts = append(r.TTFTParts, prober.TTFTPart{Component: prober.ComponentClientQueue, D: logn(0.0002, 1)})
		}
		n := 32 + rng.IntN(96)
		r.OutputTokens, r.OutputChunks, r.TokenSource = n, n, prober.TokensFromUsage
		r.ITL = make([]time.Duration, n-1)
		var decode time.Duration
		for i := range r.ITL {
			r.ITL[i] = logn(0.02+0.004*float64(scIndex), 0.35)
			decode += r.ITL[i]
			r.MaxGap = max(r.MaxGap, r.ITL[i])
		}
		r.E2E = r.TTFT + decode
		r.TPOT = decode / time.Duration(n-1)
		r.PromptTokensReported = r.PromptTokensRequested
		r.Answer = "a reply of some words"
	}
	prober.Evaluate(r, sc, prompt.Prompt{})
	return r
}

// renderDaemon is a daemon whose /metrics holds the benchmark's data: the
// daemon's own registry and handler, its collectors fed the way canaries
// and bursts feed them, its targets' info confirmed by a real simulated
// engine. No schedule runs, so nothing changes between renders but what
// observe feeds: one successful canary per (target, scenario), which
// observes into every canary histogram series, as the canaries of a real
// scrape interval do.
func renderDaemon(b testing.TB, setup renderSetup) (d *Daemon, observe func()) {
	b.Helper()
	srv, _ := testkit.StartSim(b, func(c *sim.Config) { c.Model = renderModel })
	cfg := testkit.Config(b, renderConfig(srv.URL, setup))
	opts := setup.opts
	opts.StoragePath, opts.HistoryRecent, opts.HistoryFailures, opts.GPU, opts.GPUTimeout = b.TempDir(), 20, 20, true, time.Second
	d = New(opts)
	b.Cleanup(d.stop)
	if d.gpu != nil {
		d.gpu.Start()
	}
	if _, err := d.safe.Reload(func() (*plan.Plan, error) { return plan.Of(cfg), nil }, func(p *plan.Plan) {
		d.targets.Apply(d.ctx, p.Config)
		d.probe.Configure(p.Config)
		d.bursts.Configure(p.Config)
	}); err != nil {
		b.Fatal(err)
	}
	testkit.WaitUntil(b, "every target's info", 10*time.Second, func() bool {
		for _, c := range d.targets.Clients() {
			if c.Info().Confirmed.IsZero() {
				return false
			}
		}
		return true
	})

	rng := rand.New(rand.NewPCG(1, 2))
	feed := observers{d.probe, d.targets}
	start := time.Unix(1_700_000_000, 0)
	traffics := []string{prober.TrafficCanary}
	if setup.bursts {
		traffics = append(traffics, prober.TrafficBurst)
	}
	for ti, t := range cfg.Targets {
		var runs [2][]*prober.Result // the previous and the last burst
		for si, sc := range cfg.Scenarios {
			for _, traffic := range traffics {
				d.probe.Started(t.Name, sc.Name, traffic)
				d.probe.Finished(t.Name, sc.Name, traffic)
				for i := range renderResults {
					r := renderResult(rng, t.Name, sc, si, traffic, start.Add(time.Duration(i)*time.Second))
					feed.Observe(r)
					if traffic == prober.TrafficBurst {
						runs[i%2] = append(runs[i%2], r)
					}
				}
			}
		}
		br, ok := cfg.Burst(fmt.Sprintf("load-prod-vllm-%d", ti))
		if !ok {
			continue
		}
		meta := report.Meta{Model: renderModel, Engine: "llmprobe-sim", Scenarios: cfg.Scenarios}
		var prev *report.Report
		for i, results := range runs {
			runStart := start.Add(time.Duration(i) * time.Hour)
			rep := report.Build(br, report.Run{Rate: 10, Start: runStart, End: runStart.Add(time.Minute), Planned: len(results), Results: results}, meta)
			report.Judge(rep, prev, br.MaxRegression)
			prev = rep
		}
		d.bursts.Finished(prev, nil)
		d.bursts.Due(br.Name, start.Add(2*time.Hour))
	}
	next := start.Add(3 * time.Hour)
	observe = func() {
		next = next.Add(15 * time.Second)
		for _, t := range cfg.Targets {
			for si, sc := range cfg.Scenarios {
				r := renderResult(rng, t.Name, sc, si, prober.TrafficCanary, next)
				for r.Outcome != prober.OutcomeSuccess {
					r = renderResult(rng, t.Name, sc, si, prober.TrafficCanary, next)
				}
				feed.Observe(r)
			}
		}
	}
	return d, observe
}

// countingWriter is a ResponseWriter that keeps nothing but the body's size.
type countingWriter struct {
	header http.Header
	n      int
}

func (w *countingWriter) Header() http.Header         { return w.header }
func (w *countingWriter) WriteHeader(int)             {}
func (w *countingWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// BenchmarkMetricsRender renders the daemon's whole /metrics page in each
// format a scraper may ask for: the budget's page (10 targets × 5
// scenarios of canaries, three objectives), the same with
// --no-metrics.classic-buckets, and the scale issue's page (four
// objectives, canary and burst traffic). canary-observed is the budget's
// page as a real scrape finds it: every canary series observed since the
// last render (outside the timing), so none is served from the
// histograms' cached protobufs. bytes/render is the body as sent
// (compressed where gzip was asked for); series is what Prometheus stores
// of the page (budget_test.go counts them).
//
//	go test -run '^$' -bench MetricsRender -benchmem ./app/daemon/
func BenchmarkMetricsRender(b *testing.B) {
	for _, page := range []struct {
		name     string
		setup    renderSetup
		observed bool
	}{
		{"canary", renderSetup{}, false},
		{"canary-observed", renderSetup{}, true},
		{"canary-native-only", renderSetup{opts: Options{NativeHistogramsOnly: true}}, false},
		{"canary+burst", renderSetup{stall: true, bursts: true}, false},
	} {
		b.Run(page.name, func(b *testing.B) {
			d, observe := renderDaemon(b, page.setup)
			h := d.routes()
			if !page.observed {
				observe = nil
			}
			series := countSeries(scrapeFamilies(b, h), page.setup.opts.NativeHistogramsOnly).total
			for _, f := range []struct {
				name, accept, encoding string
			}{
				{"text", "", ""},
				// Prometheus' default scrape_protocols: OpenMetrics first.
				{"openmetrics", acceptOpenMetrics, ""},
				{"openmetrics-gzip", acceptOpenMetrics, "gzip"},
				{"protobuf", acceptProtobuf, ""},
			} {
				b.Run(f.name, func(b *testing.B) { benchRender(b, h, observe, f.accept, f.encoding, series) })
			}
		})
	}
}

// The Accept headers of Prometheus' default scrape protocols (OpenMetrics
// first) and of a scrape for native histograms.
const (
	acceptOpenMetrics = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
	acceptProtobuf    = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited"
)

// benchRender renders h's page; a non-nil observe runs before each
// render, untimed.
func benchRender(b *testing.B, h http.Handler, observe func(), accept, encoding string, series int) {
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if encoding != "" {
		req.Header.Set("Accept-Encoding", encoding)
	}
	// One render to check it.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	body := rec.Body.Bytes()
	if rec.Header().Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		if body, err = io.ReadAll(zr); err != nil {
			b.Fatal(err)
		}
	}
	if !bytes.Contains(body, []byte("llmprobe_time_to_first_token_seconds")) {
		b.Fatalf("/metrics (%s) lacks the TTFT histogram", rec.Header().Get("Content-Type"))
	}
	w := &countingWriter{header: http.Header{}}
	for b.Loop() {
		if observe != nil {
			b.StopTimer()
			observe()
			b.StartTimer()
		}
		w.n = 0
		clear(w.header)
		h.ServeHTTP(w, req)
	}
	b.ReportMetric(float64(w.n), "bytes/render")
	b.ReportMetric(float64(series), "series")
}
