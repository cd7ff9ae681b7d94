package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/store"
	"github.com/llmprobe/llmprobe/stats"
	"github.com/llmprobe/llmprobe/target"
)

// recordedReport is a real report: the sim's upgraded engine measured and
// judged against the run before the upgrade (report/testdata's golden
// report), so it carries a regression verdict and a rejected request.
func recordedReport(t *testing.T) *report.Report {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r report.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if r.Regression == nil || len(r.Failures) == 0 {
		t.Fatal("testdata/report.json lost its regression verdict or its failures")
	}
	return &r
}

// unmeasuredReport is a burst that measured nothing: every figure is n/a.
func unmeasuredReport() *report.Report {
	return &report.Report{
		ID: report.ID("broken", time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC)), Burst: "broken", Target: "down", PlannedRequests: 10, Requests: 4,
		Outcomes: map[prober.Outcome]int{prober.OutcomeConnectionError: 4},
		NotSent:  []report.NotSent{{Reason: "safety brake: error ratio 1.00 over the last 1s (4 of 4 requests) passed 0.50", Count: 6}},
		Failures: []report.FailureGroup{{Outcome: prober.OutcomeConnectionError, Phase: "connect", Reason: "connection_refused", Count: 4, Example: "dial tcp 127.0.0.1:1: connect: connection refused"}},
		Latency:  map[string]stats.Summary{}, Aborted: true, AbortReason: "safety brake: error ratio 1.00",
		RegressionSkipped: "no previous report of burst broken",
	}
}

// pagesOver serves the pages over a real store holding reports.
func pagesOver(t *testing.T, reports ...*report.Report) (*httptest.Server, *store.Store) {
	t.Helper()
	store := store.New(t.TempDir(), nil)
	for _, r := range reports {
		if err := store.Save(r, 5); err != nil {
			t.Fatal(err)
		}
	}
	targets := target.NewSet(log.NewNopLogger())
	t.Cleanup(targets.Stop)
	mux := http.NewServeMux()
	New(Options{Targets: targets, Store: store, Recent: 5, Failures: 5}).Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, store
}

var reportSections = []string{`id="summary"`, `id="verdicts"`, `id="percentiles"`, `id="latency-over-time"`, `id="outcomes"`, `id="regression"`, `id="engine-metrics"`, `id="gpu"`}

// tableRow returns the first table row of dom whose first cell is first.
func tableRow(t *testing.T, dom, class, first string) string {
	t.Helper()
	i := strings.Index(dom, `<table class="`+class+`"`)
	if i < 0 {
		t.Fatalf("no table of class %s in the DOM", class)
	}
	end := i + strings.Index(dom[i:], "</table>")
	m := regexp.MustCompile(`<tr><td[^>]*>` + regexp.QuoteMeta(first) + `</td>.*?</tr>`).FindString(dom[i:end])
	if m == "" {
		t.Fatalf("the %s table has no row for %s:\n%s", class, first, dom[i:end])
	}
	return m
}

func wantAll(t *testing.T, what, page string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(page, w) {
			t.Errorf("%s lacks %q", what, w)
		}
	}
}

// /bursts/<id> as Chromium renders it: every section, the exact
// percentiles, the regression against the baseline, the GPU facts; n/a for
// what a run did not measure; screenshots in the test's artifacts.
func TestReportPageInChromium(t *testing.T) {
	browser := testkit.Chromium(t)
	rep := recordedReport(t)
	// The recorded run had no GPU; these are the facts NVML gives on a DGX H100 node.
	energy, perToken, watts, celsius := 5230.0, 1.9, 415.0, 61.0
	rep.GPU = &report.GPUFacts{Count: 2, Names: []string{"NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"}, DriverVersion: "550.54.15", CUDAVersion: "12.4",
		EnergyJoules: &energy, JoulesPerOutputToken: &perToken, MeanPowerWatts: &watts, MaxTemperatureCelsius: &celsius}
	empty := unmeasuredReport()
	srv, _ := pagesOver(t, rep, empty)
	artifacts := t.ArtifactDir()

	dom := browser.DOM(t, srv.URL+"/bursts/"+rep.ID)
	wantAll(t, "the report page", dom, reportSections...)
	for _, m := range []string{"ttft", "tpot", "itl", "e2e"} {
		s := rep.Latency[m]
		row := tableRow(t, dom, "percentiles", m)
		for _, v := range []float64{s.P50, s.P90, s.P99, s.Max} {
			wantAll(t, m+"'s percentile row", row, fmt.Sprintf(">%.1f ms<", 1000*v), fmt.Sprintf(">%d<", s.Count))
		}
	}
	reg := rep.Regression
	ttftP99 := tableRow(t, dom, "regression", "ttft</td><td>p99")
	wantAll(t, "the ttft p99 regression row", ttftP99, fmt.Sprintf("×%.3f", *reg.Metrics[1].Ratio), "significant change (p &lt; 0.05)")
	wantAll(t, "the report page", dom,
		"Burst b: <span", ">failed</span>", "gate slo_ttft failed: 70.00% of requests met ttft",
		"Baseline: report <a href=\"/bursts/"+reg.PreviousID+"\">"+reg.PreviousID+"</a>", "changed: 0.11.0 → 0.12.0",
		rep.Failures[0].Phase+": "+rep.Failures[0].Reason, // the rejected request's reason beside its outcome
		"2 × NVIDIA H100 80GB HBM3", "550.54.15", "1.900 J per output token", "415 W", "61 °C",
		`class="chart ttft-over-time"`, "TTFT (ms)", "time since the measured part began (s)", ">p99</text>")
	wantPercentileCharts(t, dom, rep)
	// Headings say what a chart is: "over time" only above a chart over time.
	wantAll(t, "the report page", dom, "<h3 id=\"percentile-charts\">Percentiles per metric, each on its own scale</h3>",
		"<section id=\"latency-over-time\">\n<h2>TTFT over time</h2>\n<svg class=\"chart ttft-over-time\"")
	if n := strings.Count(dom, "over time</h"); n != 1 {
		t.Errorf("%d headings say over time, want 1: TTFT's", n)
	}
	noWrappedCells(t, browser, srv.URL+"/bursts/"+rep.ID)
	browser.Screenshot(t, srv.URL+"/bursts/"+rep.ID, filepath.Join(artifacts, "report.png"))

	dom = browser.DOM(t, srv.URL+"/bursts/"+empty.ID)
	wantAll(t, "the unmeasured report", dom, reportSections...)
	wantAll(t, "the unmeasured report", dom, ">aborted</span>", "stopped before its end: safety brake", "n/a (no request was measured)", "connect: connection_refused (4)", "not sent", "safety brake: error ratio 1.00 over the last 1s",
		"n/a: no regression verdict, because no previous report of burst broken", "n/a: this run recorded no GPU facts", "n/a: no request succeeded", "n/a (no response)")
	for _, m := range config.BurstMetrics {
		if row := tableRow(t, dom, "percentiles", m); strings.Count(row, ">n/a<") != 7 {
			t.Errorf("%s without samples: %s, want n/a in each of the 7 figures", m, row)
		}
	}
	if strings.Contains(dom, "0.0 ms") || strings.Contains(dom, "()") {
		t.Error("the unmeasured report shows a 0 or an empty placeholder")
	}
	if strings.Contains(dom, "<svg") {
		t.Error("the unmeasured report draws a chart of nothing")
	}
	wantAll(t, "the unmeasured report", dom, "<h2>TTFT over time</h2>\n<p>n/a: no request succeeded.</p>")
	browser.Screenshot(t, srv.URL+"/bursts/"+empty.ID, filepath.Join(artifacts, "report-unmeasured.png"))

	// The saved file is the same view, without links into a server.
	file := filepath.Join(t.TempDir(), "report.html")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteReport(f, rep); err != nil {
		t.Fatal(err)
	}
	f.Close()
	dom = browser.DOM(t, "file://"+file)
	wantAll(t, "the saved report", dom, append(reportSections, "Baseline: report "+reg.PreviousID, "2 × NVIDIA H100 80GB HBM3")...)
	if strings.Contains(dom, `href="/`) {
		t.Error("the saved report links into a server it does not come with")
	}

	// /bursts: every chart has axes with units, tick labels and a legend.
	dom = browser.DOM(t, srv.URL+"/bursts")
	wantAll(t, "/bursts", dom, `class="axis-title y-title"`, "TTFT (ms)", "time since the measured part began (s)",
		`<g class="legend">`, ">p50</text>", ">TTFT of one successful request</text>", `href="/bursts/`+rep.ID+`"`)
	wantPercentileCharts(t, dom, rep)
	if ticks := regexp.MustCompile(`<g class="axis y-axis"[^>]*>(<line[^>]*></line><text[^>]*>[0-9.]+</text>)+`).FindAllString(dom, -1); len(ticks) != 5 {
		t.Errorf("/bursts has %d charts with numbered y ticks, want 5: four percentile panels and TTFT over time", len(ticks))
	}
	noWrappedCells(t, browser, srv.URL+"/bursts")
	browser.Screenshot(t, srv.URL+"/bursts", filepath.Join(artifacts, "bursts.png"))

	code, body := get(t, srv.URL, "/bursts/b-20991231T000000.000Z")
	if code != 404 || !strings.Contains(body, "No burst report has this id") {
		t.Errorf("unknown report: %d %s", code, body)
	}
}

// wantPercentileCharts checks that dom draws one chart per latency of rep,
// each on its own y axis (its top tick at or above its own p99, within a
// step of it), with the bars' values written.
func wantPercentileCharts(t *testing.T, dom string, rep *report.Report) {
	t.Helper()
	for _, m := range []string{"ttft", "tpot", "itl", "e2e"} {
		svg := regexp.MustCompile(`(?s)<svg class="chart percentiles percentiles-` + m + `".*?</svg>`).FindString(dom)
		if svg == "" {
			t.Errorf("no percentile chart of %s", m)
			continue
		}
		s := rep.Latency[m]
		wantAll(t, m+"'s chart", svg, fmt.Sprintf(">%s (%d samples)</text>", m, s.Count), ">ms</text>", ">p50</text>", ">p99</text>", `class="bar-value"`)
		ticks := regexp.MustCompile(`<g class="axis y-axis".*?</g>`).FindString(svg)
		var top float64
		for _, v := range regexp.MustCompile(`>([0-9.]+)</text>`).FindAllStringSubmatch(ticks, -1) {
			fmt.Sscan(v[1], &top)
		}
		if p99 := 1000 * s.P99; top < p99 || top > 2.5*p99 {
			t.Errorf("%s's axis ends at %g ms for a p99 of %.1f ms: not its own scale", m, top, p99)
		}
		if s.IsTooFew("p99") != strings.Contains(svg, ">too few</text>") {
			t.Errorf("%s's chart says too few: %v; its p99 from %d samples is too few: %v", m, !s.IsTooFew("p99"), s.Count, s.IsTooFew("p99"))
		}
	}
}

// noWrappedCells fails for each number of the page at url that a line
// break splits in Chromium, at a laptop's width and a narrow window's.
func noWrappedCells(t *testing.T, browser *testkit.Browser, url string) {
	t.Helper()
	_, page := get(t, url, "")
	for _, width := range []int{1280, 900} {
		if wrapped := browser.WrappedCells(t, page, width); len(wrapped) > 0 {
			t.Errorf("%s at %d pixels wraps %d numbers: %q", url, width, len(wrapped), wrapped)
		}
	}
}

// /bursts/latest?burst=NAME redirects to the newest report of NAME; a name
// with no stored report is a 404 that never echoes it.
func TestLatestBurstRedirect(t *testing.T) {
	old, newer := unmeasuredReport(), unmeasuredReport()
	newer.ID = report.ID("broken", time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC))
	srv, _ := pagesOver(t, old, newer, recordedReport(t))
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(srv.URL + "/bursts/latest?burst=broken")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/bursts/"+newer.ID {
		t.Fatalf("latest of broken: %d to %q, want 302 to /bursts/%s", resp.StatusCode, resp.Header.Get("Location"), newer.ID)
	}
	if code, page := get(t, srv.URL, "/bursts/latest?burst=broken"); code != 200 || !strings.Contains(page, newer.ID) || !strings.Contains(page, `id="percentiles"`) {
		t.Errorf("following the redirect: %d", code)
	}
	for query, want := range map[string]int{
		"":            400,
		"?burst=nope": 404,
		"?burst=%3Cscript%3Ealert(1)%3C/script%3E": 404,
		"?burst=..%2F..%2Fetc":                     404,
	} {
		code, body := get(t, srv.URL, "/bursts/latest"+query)
		if code != want {
			t.Errorf("/bursts/latest%s: %d, want %d", query, code, want)
		}
		if strings.Contains(body, "script") || strings.Contains(body, "nope") || strings.Contains(body, "etc") {
			t.Errorf("/bursts/latest%s echoes the name: %s", query, body)
		}
	}
}
