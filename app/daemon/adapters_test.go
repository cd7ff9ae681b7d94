package daemon

import (
	"fmt"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/sim"
)

// LoRA adapters ride on the model label: a scenario spread over the base
// model and an adapter keeps both models' series on one target (neither
// drops the other's as a model change would), and only the configured
// names are label values.
func TestAdaptersAsModels(t *testing.T) {
	srv, _ := testkit.StartSim(t, func(c *sim.Config) {
		c.PrefillBase, c.DecodeBase, c.Adapters = 5*time.Millisecond, 2*time.Millisecond, []string{"sql-lora"}
	})
	cfg := fmt.Sprintf(`targets:
  - {name: t, url: %q}
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
}
