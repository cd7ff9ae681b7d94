package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/report"
)

var reportSections = []string{`id="summary"`, `id="verdicts"`, `id="percentiles"`, `id="latency-over-time"`, `id="outcomes"`, `id="regression"`, `id="gpu"`}

// trendRow is the landing page's last-hour row of one pair ("target · scenario").
func trendRow(t *testing.T, page, pair string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<tr class="trend" data-pair="` + regexp.QuoteMeta(pair) + `">.*?</tr>`).FindString(page)
	if m == "" {
		t.Fatalf("the last hour has no row for %s:\n%s", pair, page)
	}
	return m
}

// summaryRow is the landing page summary's row of one target.
func summaryRow(t *testing.T, page, target string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<tr class="target" data-target="` + regexp.QuoteMeta(target) + `">.*?</tr>`).FindString(page)
	if m == "" {
		t.Fatalf("the summary has no row for %s:\n%s", target, page)
	}
	return m
}

func contains(t *testing.T, what, page string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(page, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, page)
		}
	}
}

// The daemon's pages as a person sees them in Chromium: a landing page
// that summarizes a target that answers (the sim, with a stored burst) and
// one that refuses connections; the HTML report of that real burst; the
// same report written by `llmprobe report show`; screenshots kept in the
// test's artifacts.
func TestPagesInChromium(t *testing.T) {
	browser := testkit.Chromium(t)
	srv, _ := simServer(t)
	down := testkit.RefusedURL(t)
	cfg := fmt.Sprintf(`targets:
  - {name: sim, url: %q}
  - {name: down, url: %q}
scenarios:
  - {name: chat, prompt_tokens: 16, output_tokens: 4, slo: {ttft: 2s, target_ratio: 0.9}}
canary: {interval: 500ms}
bursts:
  - name: release
    target: sim
    scenarios: [{scenario: chat}]
    arrival: {process: poisson, rate: 20}
    requests: 40
`, srv.URL, down)
	cfgPath := testkit.ConfigFile(t, cfg)
	storage, output := t.TempDir(), filepath.Join(t.TempDir(), "release.json")
	if out, err := exec.Command(binPath, "gate", "--config.file="+cfgPath, "--burst=release", "--storage.path="+storage, "--output="+output, "--no-collector.gpu").CombinedOutput(); err != nil {
		t.Fatalf("gate: %v\n%s", err, out)
	}
	var rep report.Report
	if b, err := os.ReadFile(output); err != nil || json.Unmarshal(b, &rep) != nil {
		t.Fatalf("the gate's report: %v", err)
	}

	d := startDaemon(t, "--config.file="+cfgPath, "--storage.path="+storage, "--no-collector.gpu")
	d.waitFor(t, "both targets probed and the sim's engine read", func() bool {
		_, page := d.get("/")
		return strings.Contains(page, ">violating<") && strings.Contains(page, ">meeting<") && strings.Contains(page, "llmprobe-sim ")
	})
	artifacts := t.ArtifactDir()
	page := browser.DOM(t, d.base+"/")
	contains(t, "the landing page", page, `<meta http-equiv="refresh" content="10">`, "this page reloads itself every 10 s", "among the last")
	contains(t, "the sim's summary", summaryRow(t, page, "sim"),
		`<span class="ok">up</span> for`, "llmprobe-sim ", " ago</td>", "chat</a>: <span class=\"ok\">meeting</span>", "good (100.0%), target 90.0%",
		`<a href="/bursts/`+rep.ID+`" class="ok">passed</a>`)
	contains(t, "the refused target's summary", summaryRow(t, page, "down"),
		`<span class="bad">down</span> for`, "connection refused", "n/a (never read: /v1/models fails", "never", "chat</a>: <span class=\"bad\">violating</span>", "0 of ", "no burst")
	for _, placeholder := range []string{"0 ()", "()", "<td></td>"} {
		if strings.Contains(page, placeholder) {
			t.Errorf("the landing page shows the placeholder %q", placeholder)
		}
	}
	// The last hour: a sparkline per figure with its newest value, n/a in
	// words where there is none; each failure shown once, with no hint
	// that does not apply to it.
	contains(t, "the sim's last hour", trendRow(t, page, "sim · chat"), `<svg class="spark ttft"`, `<svg class="spark tpot"`, `<svg class="spark goodput"`,
		`<span class="spark-value"><b>`, " ms</b>", "this minute", "<circle")
	contains(t, "the refused target's last hour", trendRow(t, page, "down · chat"), "n/a: no probe succeeded in the last hour", "<b>0%</b>", `<svg class="spark goodput"`)
	for _, link := range regexp.MustCompile(`href="/probe\?id=\d+"`).FindAllString(page, -1) {
		if n := strings.Count(page, link); n != 1 {
			t.Errorf("%s is on the landing page %d times: a failure listed twice", link, n)
		}
	}
	failed := regexp.MustCompile(`(?s)<h3 id="probes-down-chat">.*?href="(/probe\?id=\d+)"`).FindStringSubmatch(page)
	if failed == nil {
		t.Fatal("no probe of the refused target is linked")
	}
	contains(t, "the refused probe's page", browser.DOM(t, d.base+failed[1]), "n/a: the request failed before an answer could carry them")
	if _, probe := d.get(failed[1]); strings.Contains(probe, "include_metrics") {
		t.Error("a refused connection's page suggests vLLM's include_metrics")
	}
	for _, path := range []string{"/", "/bursts/" + rep.ID} {
		_, html := d.get(path)
		if wrapped := browser.WrappedCells(t, html, 1280); len(wrapped) > 0 {
			t.Errorf("%s wraps %d numbers in Chromium: %q", path, len(wrapped), wrapped)
		}
	}
	browser.Screenshot(t, d.base+"/", filepath.Join(artifacts, "landing.png"))

	// The burst's report, served.
	served := browser.DOM(t, d.base+"/bursts/"+rep.ID)
	contains(t, "the served report", served, reportSections...)
	contains(t, "the served report", served, ">passed</span>", fmt.Sprintf(">%.1f ms<", 1000*rep.Latency["ttft"].P99),
		"n/a: no regression verdict, because no previous report of burst release", "n/a: this run recorded no GPU facts")
	browser.Screenshot(t, d.base+"/bursts/"+rep.ID, filepath.Join(artifacts, "report.png"))

	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(d.base + "/bursts/latest?burst=release")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/bursts/"+rep.ID {
		t.Errorf("/bursts/latest?burst=release: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if code, _ := d.get("/bursts/latest?burst=nightly"); code != http.StatusNotFound {
		t.Errorf("/bursts/latest of a burst with no report: %d, want 404", code)
	}

	// The same view from the file, by `llmprobe report show`.
	out, err := exec.Command(binPath, "report", "show", output).Output()
	html := strings.TrimSuffix(output, ".json") + ".html"
	if err != nil || strings.TrimSpace(string(out)) != html {
		t.Fatalf("report show: %v, printed %q, want %q", err, out, html)
	}
	saved := browser.DOM(t, "file://"+html)
	contains(t, "the saved report", saved, reportSections...)
	for _, section := range regexp.MustCompile(`<section id="[a-z-]+">\s*<h2>[^<]+</h2>`).FindAllString(served, -1) {
		if !strings.Contains(saved, section) {
			t.Errorf("the saved report lacks the served report's %s", section)
		}
	}
	if strings.Contains(saved, `href="/`) {
		t.Error("the saved report links into a server it does not come with")
	}
	browser.Screenshot(t, "file://"+html, filepath.Join(artifacts, "report-show.png"))
}

// `report show` refuses what is not a report, with exit code 2 and the reason.
func TestReportShowBadFiles(t *testing.T) {
	dir := t.TempDir()
	notJSON, noID := filepath.Join(dir, "notes.txt"), filepath.Join(dir, "empty.json")
	for path, body := range map[string]string{notJSON: "hello", noID: "{}"} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for file, want := range map[string]string{
		filepath.Join(dir, "missing.json"): "does not exist",
		notJSON:                            "is not a burst report: invalid character",
		noID:                               `is not a burst report: it has no "id"`,
	} {
		out, err := exec.Command(binPath, "report", "show", file).CombinedOutput()
		if exitCode(err) != 2 || !strings.Contains(string(out), want) {
			t.Errorf("report show %s: exit %d, want 2 and %q\n%s", file, exitCode(err), want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "empty.html")); err == nil {
		t.Error("a page was written for a file that is not a report")
	}
}
