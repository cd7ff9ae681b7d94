package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/llmprobe/llmprobe/internal/testkit"
)

// Canary analysis, end to end: a real llmprobe compares two `llmprobe sim`
// processes, a real Prometheus scrapes it with the shipped
// LLMProbeComparisonWorse rule, its for: shortened to the test's window
// (the relation the shipped rule keeps with the longest window). A
// candidate 40 % slower at decoding is flagged for TPOT and the alert
// fires within two minutes; an identical candidate fires nothing.
func TestComparisonFlagsSlowerCandidate(t *testing.T) {
	for _, c := range []struct {
		name     string
		slowdown float64
	}{{"40 % slower decode fires", 1.4}, {"identical targets fire nothing", 1}} {
		t.Run(c.name, func(t *testing.T) { comparisonDrill(t, c.slowdown) })
	}
}

const (
	comparisonAlert  = "LLMProbeComparisonWorse"
	comparisonWindow = 20 * time.Second
)

// comparisonRules is the shipped rule group of comparisonAlert with its
// for: set to window.
func comparisonRules(t *testing.T, window time.Duration) string {
	t.Helper()
	raw, err := os.ReadFile("../../alerts/llmprobe.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Groups []struct {
			Name  string           `yaml:"name"`
			Rules []map[string]any `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			if r["alert"] != comparisonAlert {
				continue
			}
			r["for"] = window.String()
			out, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": g.Name, "rules": []any{r}}}})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "comparison.rules.yml")
			if err := os.WriteFile(path, out, 0o600); err != nil {
				t.Fatal(err)
			}
			return path
		}
	}
	t.Fatalf("alerts/llmprobe.rules.yml has no %s", comparisonAlert)
	return ""
}

func comparisonDrill(t *testing.T, slowdown float64) {
	start := time.Now()
	baseAddr, candAddr := freeAddr(t), freeAddr(t)
	startSim(t, baseAddr, "0.11.0", 1)
	startSim(t, candAddr, "0.12.0", slowdown)
	// 8 tokens of 40 ms decode steps: TPOT 40 ms against 56 ms. A pair
	// every 500 ms: 20 pairs (min_pairs) in 10 s, a verdict at the second
	// evaluation, 15 s after the first pair.
	cfg := fmt.Sprintf(`targets:
  - {name: vllm-0.11, url: "http://%s", timeout: 10s}
  - {name: vllm-0.12, url: "http://%s", timeout: 10s}
scenarios:
  - {name: chat, prompt_tokens: 32, output_tokens: 8}
canary: {interval: 500ms}
comparisons:
  - {name: upgrade, baseline: vllm-0.11, candidate: vllm-0.12, window: %s}
`, baseAddr, candAddr, comparisonWindow)
	cfgPath := testkit.ConfigFile(t, cfg)
	d := startDaemon(t, "--config.file="+cfgPath)
	prom := runPrometheus(t, fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [%q]
scrape_configs:
  - job_name: llmprobe
    static_configs: [{targets: [%q]}]
`, comparisonRules(t, comparisonWindow), strings.TrimPrefix(d.base, "http://")))

	significant := `llmprobe_comparison_significant{comparison="upgrade", scenario="chat", metric="tpot", percentile="p50"}`
	var verdict []promSample
	testkit.WaitUntil(t, "a TPOT verdict in Prometheus", 60*time.Second, func() bool {
		verdict, _ = promInstant(prom, significant)
		return len(verdict) == 1
	})
	_, page := testkit.Get(d.base + "/metrics")
	var excerpt []string
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(line, "llmprobe_comparison_") && strings.Contains(line, `metric="tpot"`) || strings.HasPrefix(line, "llmprobe_comparison_pairs") {
			excerpt = append(excerpt, line)
		}
	}
	t.Logf("/metrics, %s after the start:\n%s", time.Since(start).Round(time.Second), strings.Join(excerpt, "\n"))
	_, landing := testkit.Get(d.base + "/")
	line := landingComparison(landing)
	t.Logf("landing page: %s", line)

	if slowdown > 1 {
		testkit.WaitUntil(t, comparisonAlert+" firing", 2*time.Minute-time.Since(start), func() bool {
			verdict, _ = promInstant(prom, significant)
			state, _ := ruleState(t, prom, comparisonAlert)
			return state == "firing"
		})
		if len(verdict) != 1 || verdict[0].Value[1] != "1" {
			t.Errorf("TPOT significant: %v", verdict)
		}
		if tpot := figureIn(line, "TPOT p50"); !strings.Contains(line, "candidate vllm-0.12 against vllm-0.11") || !strings.HasPrefix(tpot, "TPOT p50 +") || !strings.HasSuffix(tpot, "), worse") {
			t.Errorf("landing page line %q", line)
		}
		t.Logf("%s fired %s after the start", comparisonAlert, time.Since(start).Round(time.Second))
		return
	}
	// Quiet: the rule has watched the verdicts for longer than its for:.
	judged := time.Now()
	testkit.WaitUntil(t, comparisonAlert+" evaluated for a window past the first verdict", 2*comparisonWindow, func() bool {
		_, last := ruleState(t, prom, comparisonAlert)
		return last.After(judged.Add(comparisonWindow + 2*time.Second))
	})
	// Never firing at any evaluation. A look may find a tail of a noisy
	// metric significant by chance, the rule then pending (that is what
	// its for: is for); the median TPOT of identical engines never.
	if state, _ := ruleState(t, prom, comparisonAlert); state != "inactive" {
		chance, _ := promInstant(prom, `llmprobe_comparison_significant == 1`)
		t.Logf("%s is %s for identical targets, significant now: %v", comparisonAlert, state, chance)
	}
	for _, expr := range []string{`max_over_time(ALERTS{alertname="` + comparisonAlert + `", alertstate="firing"}[5m])`, `max_over_time(` + significant + `[5m]) == 1`} {
		if got, err := promInstant(prom, expr); err != nil || len(got) > 0 {
			t.Errorf("%s for identical targets: %v %v", expr, got, err)
		}
	}
	if tpot := figureIn(line, "TPOT p50"); !strings.HasSuffix(tpot, "within tolerance") {
		t.Errorf("landing page line %q: %q", line, tpot)
	}
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
