package daemon

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/compare"
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
)

// Comparisons are bounded by configuration and counted apart from the
// per-pair budget: their families stay within comparison.MaxSeries (which
// a full window reaches, compare's always-on test), their requests add no
// probe series but in-flight gauges, and docs/metrics.md states the bound.
func TestComparisonSeriesBudget(t *testing.T) {
	doc, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(doc)), " ")
	worst := config.MaxComparisons*5*compare.SeriesPerScenario + config.MaxComparisons*compare.SeriesPerComparison
	for _, want := range []string{
		fmt.Sprintf("at most %d series per compared scenario and %d per comparison", compare.SeriesPerScenario, compare.SeriesPerComparison),
		fmt.Sprintf("with the most comparisons llmprobe takes (%d) over 5 scenarios each, %s.", config.MaxComparisons, commas(worst)),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("docs/metrics.md does not say %q", want)
		}
	}

	base, _ := testkit.StartSim(t, nil)
	cand, _ := testkit.StartSim(t, nil)
	path := testkit.ConfigFile(t, fmt.Sprintf(`targets:
  - {name: base, url: %q, model: m, timeout: 5s}
  - {name: cand, url: %q, model: m, timeout: 5s}
scenarios:
  - {name: short, prompt_tokens: 16, output_tokens: 4}
  - {name: long, prompt_tokens: 16, output_tokens: 8}
canary: {interval: 100ms}
comparisons:
  - {name: upgrade, baseline: base, candidate: cand, window: 10s}
  - {name: back, baseline: cand, candidate: base, scenarios: [short], window: 10s}
`, base.URL, cand.URL))
	d := New(Options{ConfigFile: path, StoragePath: t.TempDir(), HistoryRecent: 5, HistoryFailures: 5})
	defer d.stop()
	if err := d.reload(); err != nil {
		t.Fatal(err)
	}
	cfg := d.safe.Get().Config
	testkit.WaitUntil(t, "every compared scenario's first evaluation", 20*time.Second, func() bool {
		n := 0
		for _, f := range scrapeFamilies(t, d.routes()) {
			if f.GetName() == "llmprobe_comparison_pairs" {
				n = len(f.GetMetric())
			}
		}
		return n == len(cfg.ComparisonPairs())
	})
	comparisonSeries, probeTraffic := 0, 0
	for _, f := range scrapeFamilies(t, d.routes()) {
		for _, m := range f.GetMetric() {
			if strings.HasPrefix(f.GetName(), "llmprobe_comparison_") {
				comparisonSeries++
			}
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "traffic" && lp.GetValue() == "comparison" && f.GetName() != "llmprobe_in_flight_requests" {
					probeTraffic++
				}
			}
		}
	}
	if max := compare.MaxSeries(cfg); comparisonSeries == 0 || comparisonSeries > max {
		t.Errorf("%d comparison series, bound %d", comparisonSeries, max)
	}
	if probeTraffic != 0 {
		t.Errorf("%d probe series with traffic=\"comparison\"", probeTraffic)
	}
}

// commas writes n with thousands separators, as the docs do.
func commas(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
