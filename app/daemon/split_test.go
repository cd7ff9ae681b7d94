package daemon

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/sim"
)

// The TTFT split as the daemon exports it, canary and burst, against the
// sim reporting its queue and prefill as vLLM does: per series the
// component gauges are the engine's split of one request (no server_other
// left), and they add up to that request's TTFT, which the TTFT native
// histogram's exemplars hold (it keeps the last ten observations' values).
func TestTTFTComponentsAddUpOnMetrics(t *testing.T) {
	srv, _ := testkit.StartSim(t, func(c *sim.Config) { c.PrefillBase, c.DecodeBase = 20*time.Millisecond, 2*time.Millisecond })
	dir := t.TempDir()
	path := filepath.Join(dir, "llmprobe.yml")
	writeFile(t, path, `targets:
  - {name: sim, url: "`+srv.URL+`", model: m, extra_body: {include_metrics: true}}
scenarios:
  - {name: s, prompt_tokens: 16, output_tokens: 4}
canary: {interval: 300ms}
bursts:
  - name: b
    target: sim
    scenarios: [{scenario: s}]
    arrival: {rate: 20}
    requests: 10
    schedule: {on_start: true}
`)
	d := startDaemon(t, Options{ConfigFile: path, StoragePath: filepath.Join(dir, "data"), HistoryRecent: 5, HistoryFailures: 5})
	key := func(m *dto.Metric) string {
		var k []string
		for _, l := range m.GetLabel() {
			if l.GetName() != "component" {
				k = append(k, l.GetName()+"="+l.GetValue())
			}
		}
		return strings.Join(k, ",")
	}
	var problems []string
	defer func() {
		if t.Failed() {
			t.Log(problems)
		}
	}()
	// A scrape can fall between a request's TTFT and its split: wait for
	// one that has both of the same requests.
	testkit.WaitUntil(t, "canary and burst TTFT components adding up (the last problems are logged)", 30*time.Second, func() bool {
		fams := map[string]*dto.MetricFamily{}
		for _, f := range scrapeFamilies(t, d.routes()) {
			fams[f.GetName()] = f
		}
		ttfts := map[string][]float64{} // series -> the values of its exemplars
		for _, m := range fams["llmprobe_time_to_first_token_seconds"].GetMetric() {
			for _, e := range m.GetHistogram().GetExemplars() {
				ttfts[key(m)] = append(ttfts[key(m)], e.GetValue())
			}
		}
		sums, parts := map[string]float64{}, map[string][]string{}
		for _, m := range fams["llmprobe_probe_ttft_component_seconds"].GetMetric() {
			sums[key(m)] += m.GetGauge().GetValue()
			for _, l := range m.GetLabel() {
				if l.GetName() == "component" {
					parts[key(m)] = append(parts[key(m)], l.GetValue())
				}
			}
		}
		problems = problems[:0]
		if len(ttfts) != 2 {
			problems = append(problems, fmt.Sprintf("TTFT of %d series, want canary and burst", len(ttfts)))
		}
		for k, values := range ttfts {
			want := []string{prober.ComponentDispatch, prober.ComponentConnect, prober.ComponentEngineQueue, prober.ComponentEnginePrefill, prober.ComponentNetwork}
			if strings.Contains(k, "traffic=burst") {
				want = append(want, prober.ComponentClientQueue)
			}
			slices.Sort(want)
			slices.Sort(parts[k])
			if !slices.Equal(parts[k], want) {
				problems = append(problems, fmt.Sprintf("%s: components %v, want %v", k, parts[k], want))
			}
			if !slices.ContainsFunc(values, func(v float64) bool { return math.Abs(v-sums[k]) < 1e-6 }) {
				problems = append(problems, fmt.Sprintf("%s: components add up to %gs, no recent TTFT (%v)", k, sums[k], values))
			}
		}
		return len(problems) == 0
	})
}
