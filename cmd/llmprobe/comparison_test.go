package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/testkit"
)

// Canary analysis, end to end: a real llmprobe compares two `llmprobe sim`
// processes at a pair a second, a real Prometheus scrapes it with the
// shipped rules. A candidate 20 % slower at decoding fails and the shipped
// LLMProbeComparisonWorse fires; an identical candidate passes and never
// fails, and when it is replaced by another version the epoch starts
// afresh, on /metrics and on the landing page. Either way the shipped Argo
// Rollouts and Flagger templates' queries and /api/v1/comparisons say what
// the decision says.
func TestComparisonFlagsSlowerCandidate(t *testing.T) {
	for _, c := range []struct {
		name     string
		slowdown float64
	}{{"20 % slower decode fails", 1.2}, {"identical targets pass; an upgrade starts a new epoch", 1}} {
		t.Run(c.name, func(t *testing.T) { comparisonDrill(t, c.slowdown) })
	}
}

const comparisonAlert = "LLMProbeComparisonWorse"

func comparisonDrill(t *testing.T, slowdown float64) {
	start := time.Now()
	baseAddr, candAddr := freeAddr(t), freeAddr(t)
	// A 150 ms prefill, the same on both sides, keeps TTFT's paired ratios
	// steady (a few ms of scheduling noise on 2 ms was σ ≈ 0.4 in log
	// ratio), so every metric decides on about min_pairs pairs.
	startSimPrefill(t, baseAddr, "0.11.0", 1, 150*time.Millisecond)
	cand := startSimPrefill(t, candAddr, "0.12.0", slowdown, 150*time.Millisecond)
	// 8 tokens of 40 ms decode steps: TPOT 40 ms against 48 ms. A pair a
	// second: 20 pairs (min_pairs) in 20 s. The targets' versions are read
	// every second, so a new one is seen at once.
	cfg := fmt.Sprintf(`targets:
  - {name: vllm-0.11, url: "http://%s", timeout: 10s, info_interval: 1s}
  - {name: vllm-0.12, url: "http://%s", timeout: 10s, info_interval: 1s}
scenarios:
  - {name: chat, prompt_tokens: 32, output_tokens: 8}
canary: {interval: 1s}
comparisons:
  - {name: upgrade, baseline: vllm-0.11, candidate: vllm-0.12}
`, baseAddr, candAddr)
	cfgPath := testkit.ConfigFile(t, cfg)
	d := startDaemon(t, "--config.file="+cfgPath)
	rules, err := filepath.Abs("../../alerts/llmprobe.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	prom := runPrometheus(t, fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [%q]
scrape_configs:
  - job_name: llmprobe
    static_configs: [{targets: [%q]}]
`, rules, strings.TrimPrefix(d.base, "http://")))

	decision := `llmprobe_comparison_decision{comparison="upgrade", scenario="chat"} != 0`
	var got []promSample
	testkit.WaitUntil(t, "a decision in Prometheus", 5*time.Minute, func() bool {
		got, _ = promInstant(prom, decision)
		return len(got) == 1
	})
	want := map[bool]int{true: -1, false: 1}[slowdown > 1]
	if got[0].Value[1] != strconv.Itoa(want) {
		t.Errorf("slowdown %.1f decided %v, want %d", slowdown, got, want)
	}
	t.Logf("decided %s after the start", time.Since(start).Round(time.Second))
	checkRolloutVerdicts(t, prom, d.base, "upgrade", want)
	t.Logf("/metrics, %s after the start:\n%s", time.Since(start).Round(time.Second), comparisonExcerpt(d.base))
	line := landingComparison(getPage(t, d.base+"/"))
	t.Logf("landing page: %s", line)

	if slowdown > 1 {
		testkit.WaitUntil(t, comparisonAlert+" firing", 90*time.Second, func() bool {
			state, _ := ruleState(t, prom, comparisonAlert)
			return state == "firing"
		})
		if tpot := figureIn(line, "TPOT p50"); !strings.Contains(line, "candidate vllm-0.12 (llmprobe-sim 0.12.0, model drill-model) against vllm-0.11 (llmprobe-sim 0.11.0, model drill-model): fail — ") || !strings.HasPrefix(tpot, "TPOT p50 +") || !strings.Contains(tpot, "), worse beyond 10 %, decided ") {
			t.Errorf("landing page line %q", line)
		}
		t.Logf("%s fired %s after the start", comparisonAlert, time.Since(start).Round(time.Second))
		return
	}
	// Identical: no metric ever failed.
	for _, expr := range []string{`max_over_time(ALERTS{alertname="` + comparisonAlert + `"}[5m])`, `min_over_time(llmprobe_comparison_metric_decision[5m]) == -1`, `min_over_time(llmprobe_comparison_decision[5m]) == -1`} {
		if got, err := promInstant(prom, expr); err != nil || len(got) > 0 {
			t.Errorf("%s for identical targets: %v %v", expr, got, err)
		}
	}
	if strings.Contains(line, ": fail — ") || !strings.Contains(figureIn(line, "TPOT p50"), "within 10 %, decided") {
		t.Errorf("landing page line %q", line)
	}

	// The candidate is upgraded: its decision is gone, a new epoch says why.
	cand.stop()
	startSimPrefill(t, candAddr, "0.12.1", slowdown, 150*time.Millisecond)
	testkit.WaitUntil(t, "an epoch started for the candidate's new version", 30*time.Second, func() bool {
		return strings.Contains(comparisonExcerpt(d.base), `llmprobe_comparison_epochs_total{comparison="upgrade",reason="candidate",scenario="chat"} 1`)
	})
	metrics := comparisonExcerpt(d.base)
	line = landingComparison(getPage(t, d.base+"/"))
	t.Logf("after the upgrade, /metrics:\n%s\nlanding page: %s", metrics, line)
	if want := "the candidate changed: llmprobe-sim 0.12.0, model drill-model → llmprobe-sim 0.12.1, model drill-model"; !strings.Contains(line, want) {
		t.Errorf("landing page line %q does not say %q", line, want)
	}
}

// comparisonExcerpt is the comparison's lines of /metrics but the tails'.
func comparisonExcerpt(base string) string {
	_, page := testkit.Get(base + "/metrics")
	var out []string
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(line, "llmprobe_comparison_") && !strings.Contains(line, `percentile="p9`) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

func getPage(t *testing.T, url string) string {
	t.Helper()
	code, body := testkit.Get(url)
	if code != 200 {
		t.Fatalf("%s: %d", url, code)
	}
	return body
}

// figureIn is the figure of the landing page line that starts with name.
func figureIn(line, name string) string {
	for _, f := range strings.Split(line, "; ") {
		if _, after, ok := strings.Cut(f, name); ok {
			return name + after
		}
	}
	return ""
}

// landingComparison is the landing page's comparison line, its tags dropped.
func landingComparison(page string) string {
	_, after, ok := strings.Cut(page, `<ul class="comparisons"><li>`)
	if !ok {
		return ""
	}
	line, _, _ := strings.Cut(after, "</li>")
	return strings.NewReplacer("&#43;", "+", "&#39;", "'", "&amp;", "&").Replace(line)
}
