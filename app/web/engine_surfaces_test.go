package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	stdhtml "html"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/llmprobe/llmprobe/burst"
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/enginemetrics"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
	reportrender "github.com/llmprobe/llmprobe/report/render"
	"github.com/llmprobe/llmprobe/report/store"
	"github.com/llmprobe/llmprobe/sim"
	"github.com/llmprobe/llmprobe/target"
)

// coarsePage serves vLLM's names with coarse buckets, ten more requests at
// every read: TTFT all in its first bucket (≤250 ms), e2e all above the
// last bound (1 ms), ITL all in 500–1000 ms (above any client's gap), TPOT
// in 1–1000 ms. Means from the sums are 40 ms, 300 ms, 700 ms, 10 ms.
func coarsePage(w http.ResponseWriter, n int) {
	hist := func(name string, les []string, counts []int, mean float64) {
		fmt.Fprintf(w, "# TYPE %s histogram\n", name)
		for i, le := range les {
			fmt.Fprintf(w, "%s_bucket{model_name=\"m\",le=\"%s\"} %d\n", name, le, counts[i]*n)
		}
		fmt.Fprintf(w, "%s_bucket{model_name=\"m\",le=\"+Inf\"} %d\n%s_sum{model_name=\"m\"} %g\n%s_count{model_name=\"m\"} %d\n", name, n, name, mean*float64(n), name, n)
	}
	hist("vllm:time_to_first_token_seconds", []string{"0.25", "2.5"}, []int{1, 1}, 0.04)
	hist("vllm:e2e_request_latency_seconds", []string{"0.001"}, []int{0}, 0.3)
	hist("vllm:inter_token_latency_seconds", []string{"0.5", "1"}, []int{0, 1}, 0.7)
	hist("vllm:request_time_per_output_token_seconds", []string{"0.001", "1"}, []int{0, 1}, 0.01)
	fmt.Fprintf(w, "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{model_name=\"m\"} 3\n")
}

// llamaPage serves llama.cpp's counters, advancing at every read: 64
// generated tokens at 10 ms each and 100 prompt tokens at 5 ms each.
func llamaPage(w http.ResponseWriter, n int) {
	for _, c := range []struct {
		name string
		v    float64
	}{{"llamacpp:tokens_predicted_total", 64}, {"llamacpp:tokens_predicted_seconds_total", 0.64}, {"llamacpp:prompt_tokens_total", 100}, {"llamacpp:prompt_seconds_total", 0.5}} {
		fmt.Fprintf(w, "# TYPE %s counter\n%s %g\n", c.name, c.name, c.v*float64(n))
	}
	fmt.Fprintf(w, "# TYPE llamacpp:requests_deferred gauge\nllamacpp:requests_deferred 2\n")
}

// enginePage serves page with a count that grows at every read.
func enginePage(t *testing.T, page func(http.ResponseWriter, int)) *httptest.Server {
	var reads atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		page(w, 10*int(reads.Add(1)))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// surfaces runs a burst against the sim with the engine page at emURL
// and returns the report and its text, Markdown, JSON and HTML.
func surfaces(t *testing.T, simURL, emURL, family string) (*report.Report, map[string]string) {
	t.Helper()
	tg := testkit.Target(simURL, config.APIChat)
	em := config.DefaultEngineMetrics
	em.URL, em.Family = emURL, family
	tg.EngineMetrics = &em
	c, err := prober.NewClient(tg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	b := config.DefaultBurst
	b.Name, b.Target = "b", "t"
	b.Scenarios = []config.WeightedScenario{{Scenario: "s", Weight: 1}}
	b.Arrival = config.Arrival{Process: config.ArrivalConstant, Rate: 20, Burstiness: 1}
	b.Duration = config.Duration(time.Second)
	s := testkit.Scenario()
	s.OutputTokens = config.Distribution{Kind: config.DistFixed, Value: 8}
	rep, err := burst.Runner{Client: c}.Run(context.Background(), plan.BurstOf(b, s))
	if err != nil {
		t.Fatal(err)
	}
	var text, md, html bytes.Buffer
	reportrender.Text(&text, rep)
	if err := reportrender.Markdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteReport(&html, rep); err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	page := stdhtml.UnescapeString(html.String())
	page = page[strings.Index(page, `id="engine-metrics"`):]
	page = page[:strings.Index(page, "</section>")]
	return rep, map[string]string{"text": text.String(), "markdown": md.String(), "json": string(js), "html": page}
}

// Issue 26: an engine page with coarse buckets. No surface prints a server
// percentile as an exact figure or a negative difference as a value: a
// percentile is its bucket, a difference the interval the bucket permits,
// or n/a where the bucket is unbounded or lies above the client's figure.
func TestCoarseBucketsOnEverySurface(t *testing.T) {
	simSrv, _ := testkit.StartSim(t, nil)
	page := enginePage(t, coarsePage)
	rep, out := surfaces(t, simSrv.URL, page.URL+"/metrics", config.EngineFamilyVLLM)
	if e := rep.EngineMetrics; e == nil || e.Error != "" {
		t.Fatalf("engine metrics %+v", e)
	}
	// A client figure is "123.4ms"; a server percentile is never bare.
	negativeValue := regexp.MustCompile(`(difference|\|) [−-]\d+(\.\d+)?ms( |\||$)`)
	for name, s := range out {
		if name == "json" {
			continue
		}
		for _, want := range []string{"≤250ms", "between −", enginemetrics.NACoarse, "lies above the client's figure"} {
			if !strings.Contains(s, want) {
				t.Errorf("%s lacks %q:\n%s", name, want, s)
			}
		}
		if m := negativeValue.FindString(s); m != "" {
			t.Errorf("%s prints a negative difference as a value (%q):\n%s", name, m, s)
		}
		if strings.Contains(s, "≈") && regexp.MustCompile(`≈\d+(\.\d+)?ms( |<|,|\)|$)[^i]`).MatchString(s) {
			t.Errorf("%s prints an estimate without its bucket:\n%s", name, s)
		}
	}
	var back report.Report
	if err := json.Unmarshal([]byte(out["json"]), &back); err != nil {
		t.Fatal(err)
	}
	intervals := 0
	for _, c := range back.EngineMetrics.ClientVsServer {
		if c.Quantile == "mean" || c.Server == nil {
			continue
		}
		if c.ServerBucketLower == nil || c.Resolution == "" {
			t.Errorf("%s %s: the server percentile lacks its bucket or resolution: %+v", c.Metric, c.Quantile, c)
		}
		if c.Difference != nil && *c.Difference < 0 {
			t.Errorf("%s %s: negative difference %g as a value", c.Metric, c.Quantile, *c.Difference)
		}
		if c.Difference == nil && c.DifferenceUpper == nil {
			t.Errorf("%s %s: neither a value nor an interval: %+v", c.Metric, c.Quantile, c)
		}
		if c.Metric == "ttft" && c.DifferenceLower != nil && c.DifferenceUpper != nil && c.NA == "" {
			intervals++
		}
	}
	if intervals != 3 || !strings.Contains(out["json"], `"difference_lower":`) {
		t.Errorf("%d ttft percentiles as intervals, want 3:\n%s", intervals, out["json"])
	}

	// The landing page's engine line: a p99 as its bucket, never ≈.
	landing := landingLine(t, simSrv.URL, page.URL+"/metrics", config.EngineFamilyVLLM, "ttft mean")
	for _, want := range []string{"ttft mean 40.0 ms (p99 in ≤250ms)", "tpot mean 10.0 ms (p99 in 1–1000ms)", "e2e mean 300.0 ms (p99 in >1ms)", "requests_waiting 3"} {
		if !strings.Contains(landing, want) {
			t.Errorf("landing line lacks %q: %s", want, landing)
		}
	}
	if strings.Contains(landing, "≈") {
		t.Errorf("landing line prints an estimate: %s", landing)
	}
}

// llama.cpp's page has counters only: its counts are tokens, its n/a rows
// claim nothing, no surface speaks of buckets, and the landing page shows
// both of its figures, TPOT and prefill per token.
func TestLlamaCPPOnEverySurface(t *testing.T) {
	simSrv, _ := testkit.StartSim(t, func(c *sim.Config) { c.Engine = sim.EngineLlamaCPP })
	_, out := surfaces(t, simSrv.URL, simSrv.URL+"/metrics", config.EngineFamilyAuto)
	for name, s := range out {
		if name == "json" {
			continue
		}
		if strings.Contains(s, "bucket") {
			t.Errorf("%s speaks of buckets for an engine without:\n%s", name, s)
		}
		if !regexp.MustCompile(`\d+ tokens`).MatchString(s) && name != "markdown" {
			t.Errorf("%s does not say its counts are tokens:\n%s", name, s)
		}
		for _, line := range strings.Split(s, "\n") {
			if strings.Contains(line, "n/a") && strings.Contains(line, "exact") {
				t.Errorf("%s: an n/a row claims exactness: %s", name, line)
			}
		}
	}
	if !strings.Contains(out["text"], "prefill_per_token") || !strings.Contains(out["markdown"], "prefill_per_token mean") {
		t.Errorf("prefill per token missing:\n%s\n%s", out["text"], out["markdown"])
	}
	page := enginePage(t, llamaPage)
	landing := landingLine(t, simSrv.URL, page.URL+"/metrics", config.EngineFamilyLlamaCPP, "tpot mean")
	for _, want := range []string{"tpot mean 10.0 ms", "prefill_per_token mean 5.0 ms", "requests_waiting 2"} {
		if !strings.Contains(landing, want) {
			t.Errorf("landing line lacks %q: %s", want, landing)
		}
	}
}

// landingLine serves the landing page over a target reading emURL and
// returns its engine line once it shows want (after two reads).
func landingLine(t *testing.T, simURL, emURL, family, want string) string {
	t.Helper()
	cfg := testkit.Config(t, fmt.Sprintf("targets: [{name: t, url: %q, model: m, engine_metrics: {url: %q, family: %s, interval: 5s, timeout: 1s}}]\nscenarios: [{name: s}]\n", simURL, emURL, family))
	targets := target.NewSet(log.NewNopLogger())
	t.Cleanup(targets.Stop)
	targets.Apply(context.Background(), cfg)
	mux := http.NewServeMux()
	New(Options{Targets: targets, Store: store.New("", nil), TelemetryPath: "/metrics"}).Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	line := regexp.MustCompile(`<div class="engine-metrics [a-z]+">([^<]*)</div>`)
	var got string
	testkit.WaitUntil(t, "the landing page's engine line to show "+want, 15*time.Second, func() bool {
		_, body := get(t, srv.URL, "/")
		m := line.FindStringSubmatch(body)
		if m == nil {
			return false
		}
		got = stdhtml.UnescapeString(m[1])
		return strings.Contains(got, want)
	})
	return got
}
