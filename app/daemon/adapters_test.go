package daemon

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/sim"
)

// LoRA adapters ride on the model label: a scenario spread over the base
// model and an adapter keeps both models' series on one target (neither
// drops the other's as a model change would), and only the configured
// names are label values. With replicas on too (any header the sim sets
// names one), the page stays lint-clean within the series budget.
func TestAdaptersAsModels(t *testing.T) {
	srv, _ := testkit.StartSim(t, func(c *sim.Config) {
		c.PrefillBase, c.DecodeBase, c.Adapters = 5*time.Millisecond, 2*time.Millisecond, []string{"sql-lora"}
	})
	cfg := fmt.Sprintf(`targets:
  - {name: t, url: %q, replicas: {header: Content-Type, values: [text/event-stream]}}
scenarios:
  - {name: plain, prompt_tokens: 16, output_tokens: 4}
  - {name: spread, prompt_tokens: 16, output_tokens: 4, adapters: [{name: sql-lora, weight: 1}, {name: m, weight: 1}]}
canary: {interval: 100ms}
`, srv.URL)
	d := startDaemon(t, Options{ConfigFile: testkit.ConfigFile(t, cfg), StoragePath: t.TempDir(), HistoryRecent: 5, HistoryFailures: 5})
	successes := func(model, scenario string) float64 {
		var n float64
		for _, f := range scrapeFamilies(t, d.routes()) {
			if f.GetName() != "llmprobe_requests_total" {
				continue
			}
			for _, m := range f.GetMetric() {
				l := map[string]string{}
				for _, p := range m.GetLabel() {
					l[p.GetName()] = p.GetValue()
				}
				if l["model"] == model && l["scenario"] == scenario && l["outcome"] == "success" {
					n += m.GetCounter().GetValue()
				}
			}
		}
		return n
	}
	testkit.WaitUntil(t, "successes of the adapter and the base model, side by side", 20*time.Second, func() bool {
		return successes("sql-lora", "spread") >= 3 && successes("m", "spread") >= 3 && successes("m", "plain") >= 3
	})
	// Still there after more requests of each: no model change dropped them.
	before := successes("sql-lora", "spread")
	testkit.WaitUntil(t, "more adapter requests, the count kept", 10*time.Second, func() bool { return successes("sql-lora", "spread") > before })

	code, page := d.get("/metrics")
	if code != http.StatusOK || !strings.Contains(page, `llmprobe_replica_requests_total{model="sql-lora",outcome="success",replica="text/event-stream"`) {
		t.Fatalf("/metrics: %d, no replica series of the adapter", code)
	}
	testkit.PromtoolCheckMetrics(t, page)
	// Three series sets: the plain scenario's, and the spread one's two
	// models; each within the budget of a pair, the replica's series in.
	c := countSeries(scrapeFamilies(t, d.routes()), false)
	shared := 0
	for _, n := range c.shared {
		shared += n
	}
	if per := float64(c.total-shared) / 3; per > 120 {
		t.Errorf("%.1f series per label set (%d in all, %d shared): past the budget of 120", per, c.total, shared)
	}
}
