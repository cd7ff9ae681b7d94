package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"go.uber.org/goleak"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/store"
	"github.com/llmprobe/llmprobe/stats"
	"github.com/llmprobe/llmprobe/target"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func get(t *testing.T, base, path string) (int, string) {
	t.Helper()
	code, body := testkit.Get(base + path)
	if code == 0 {
		t.Fatal(body)
	}
	return code, body
}

// The pages over a real target set, a canary schedule, a probe and a stored
// report; ids that name nothing are 404s, never a path into the disk.
func TestPages(t *testing.T) {
	sim, _ := testkit.StartSim(t, nil)
	cfg := testkit.Config(t, `targets: [{name: t, url: "`+sim.URL+`", model: m}]
scenarios: [{name: s, prompt_tokens: 8, output_tokens: 2}]
canary: {interval: 15s}
`)
	targets := target.NewSet(log.NewNopLogger())
	defer targets.Stop()
	targets.Apply(context.Background(), cfg)
	store := store.New(t.TempDir(), nil)
	site := New(Options{
		Targets: targets, Store: store, TelemetryPath: "/metrics", Recent: 5, Failures: 5,
		Schedules: func() []config.Pair { return cfg.CanaryPairs() },
	})
	mux := http.NewServeMux()
	site.Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	code, page := get(t, srv.URL, "/")
	if code != 200 || !strings.Contains(page, `<h3 id="probes-t-s">t · s</h3>`) || !strings.Contains(page, "canary every 15s; no probe has finished yet") {
		t.Errorf("landing page before any probe (%d):\n%s", code, page)
	}

	res := &prober.Result{Target: "t", Scenario: "s", Model: "m", Sched: time.Now(), Outcome: prober.OutcomeTimeout, Phase: "headers", Reason: "deadline",
		Error: "deadline after 2s", Body: "<partial>"}
	res.Note("POST %s", "http://x/v1/chat/completions")
	site.Observe(res)
	targets.Observe(res)
	code, page = get(t, srv.URL, "/")
	for _, want := range []string{`href="/probe?id=1"`, "headers: deadline after 2s [deadline]", `<span class="bad">down</span> for`} {
		if code != 200 || !strings.Contains(page, want) {
			t.Errorf("landing page (%d) lacks %q:\n%s", code, want, page)
		}
	}
	code, page = get(t, srv.URL, "/probe?id=1")
	for _, want := range []string{"POST http://x/v1/chat/completions", "headers (deadline)", "&lt;partial&gt;"} {
		if code != 200 || !strings.Contains(page, want) {
			t.Errorf("probe page (%d) lacks %q:\n%s", code, want, page)
		}
	}
	for path, want := range map[string]int{"/probe?id=x": 400, "/probe?id=99": 404} {
		if code, _ := get(t, srv.URL, path); code != want {
			t.Errorf("%s: %d, want %d", path, code, want)
		}
	}

	// Configure forgets pairs that are gone.
	site.Configure(testkit.Config(t, `targets: [{name: other, url: "`+sim.URL+`"}]
scenarios: [{name: s}]
`))
	if code, _ := get(t, srv.URL, "/probe?id=1"); code != 404 {
		t.Error("a removed pair's probe is still served")
	}
	// A probe of the removed pair that was in flight finishes late.
	site.Observe(res)
	if _, page := get(t, srv.URL, "/"); strings.Contains(page, "/probe?id=") {
		t.Error("a late result brought a removed pair's probe back to the landing page")
	}

	if code, page := get(t, srv.URL, "/bursts"); code != 200 || !strings.Contains(page, "No burst report yet") {
		t.Errorf("/bursts without reports (%d):\n%s", code, page)
	}
	rep := &report.Report{
		ID: report.ID("nightly", time.Date(2026, 11, 23, 2, 30, 0, 0, time.UTC)), Burst: "nightly", Target: "t", Requests: 2,
		Latency:    map[string]stats.Summary{"ttft": {Count: 2, P50: 0.1, P90: 0.15, P99: 0.2}, "e2e": {Count: 2, P50: 1, P99: 1.5}},
		TTFTSeries: [][2]float64{{0, 0.1}, {0.5, 0.2}},
		Gates:      []decide.Gate{{Name: "slo_ttft", Passed: false, Detail: "50.00% of requests met ttft <= 150ms"}},
	}
	if err := store.Save(rep, 5); err != nil {
		t.Fatal(err)
	}
	code, page = get(t, srv.URL, "/bursts")
	for _, want := range []string{`<svg class="chart percentiles percentiles-ttft"`, `<svg class="chart percentiles percentiles-e2e"`, "No chart for tpot, itl: n/a, no request gave a sample", `<svg class="chart ttft-over-time"`, "<circle", "<rect", "50.00% of requests met", `href="/bursts/` + rep.ID + `.json"`} {
		if code != 200 || !strings.Contains(page, want) {
			t.Errorf("/bursts (%d) lacks %s", code, want)
		}
	}
	if code, body := get(t, srv.URL, "/bursts/"+rep.ID+".json"); code != 200 || !strings.Contains(body, `"burst": "nightly"`) {
		t.Errorf("report JSON: %d %s", code, body)
	}
	// A burst that broke: what was not sent, why requests failed, and n/a
	// where nothing was measured.
	broken := &report.Report{
		ID: report.ID("broken", time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC)), Burst: "broken", Target: "t", PlannedRequests: 10, Requests: 4,
		Outcomes: map[prober.Outcome]int{prober.OutcomeConnectionError: 4},
		NotSent:  []report.NotSent{{Reason: "safety brake: error ratio 1.00 over the last 1s (4 of 4 requests) passed 0.50", Count: 6}},
		Failures: []report.FailureGroup{{Outcome: prober.OutcomeConnectionError, Phase: "connect", Reason: "connection_refused", Count: 4, Example: "dial tcp 127.0.0.1:1: connect: connection refused"}},
		FailedSamples: []report.FailedRequest{{At: 0.02, Outcome: prober.OutcomeConnectionError, Phase: "connect", Reason: "connection_refused",
			Error: "dial tcp 127.0.0.1:1: connect: connection refused", Log: []string{"  0.1ms POST http://127.0.0.1:1/v1/chat/completions"}}},
		Latency: map[string]stats.Summary{"ttft": {}}, Aborted: true, AbortReason: "safety brake: error ratio 1.00",
		Gates: []decide.Gate{{Name: "slo_ttft", Detail: "n/a: no request was measured against ttft <= 1s"}},
	}
	if err := store.Save(broken, 5); err != nil {
		t.Fatal(err)
	}
	code, page = get(t, srv.URL, "/bursts")
	for _, want := range []string{`Outcomes: connection_error 4 · <span class="bad">not sent 6: safety brake: error ratio 1.00 over the last 1s (4 of 4 requests) passed 0.50</span></p>`, "connection_refused", "dial tcp 127.0.0.1:1: connect: connection refused", "TTFT p99 n/a", "goodput n/a", "n/a achieved", "Failed requests, with their timelines (1 kept)", "POST http://127.0.0.1:1/v1/chat/completions"} {
		if code != 200 || !strings.Contains(page, want) {
			t.Errorf("/bursts (%d) lacks %q for the broken burst", code, want)
		}
	}
	if code, page := get(t, srv.URL, "/bursts/"+rep.ID); code != 200 || !strings.Contains(page, `id="percentiles"`) {
		t.Errorf("/bursts/%s (%d) is not the HTML report:\n%s", rep.ID, code, page)
	}
	for _, path := range []string{"/bursts/nope", "/bursts/nope.json", "/bursts/nightly-20991231T000000Z.json", "/bursts/..%2f..%2fetc%2fpasswd.json", "/bursts/-20261123T023000Z.json"} {
		if code, _ := get(t, srv.URL, path); code != 404 {
			t.Errorf("%s: %d, want 404", path, code)
		}
	}
}
