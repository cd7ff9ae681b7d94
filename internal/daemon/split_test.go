package daemon

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/sim"
)

// The TTFT split as the daemon exports it, canary and burst, against the
// sim reporting its queue and prefill as vLLM does: per series the
// components' sums add up to TTFT's sum, each component is observed once per
// request at most, and every request carried the engine's split.
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
	var fams map[string]*dto.MetricFamily
	testkit.WaitUntil(t, "canary and burst TTFT components", 30*time.Second, func() bool {
		_, page := d.get("/metrics")
		parser := expfmt.NewTextParser(model.UTF8Validation)
		var err error
		fams, err = parser.TextToMetricFamilies(strings.NewReader(page))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, m := range fams["llmprobe_time_to_first_token_seconds"].GetMetric() {
			if m.GetHistogram().GetSampleCount() >= 3 {
				n++
			}
		}
		return n == 2 // canary and burst
	})
	ttft := map[string]*dto.Histogram{}
	key := func(m *dto.Metric) string {
		var k []string
		for _, l := range m.GetLabel() {
			if l.GetName() != "component" {
				k = append(k, l.GetName()+"="+l.GetValue())
			}
		}
		return strings.Join(k, ",")
	}
	for _, m := range fams["llmprobe_time_to_first_token_seconds"].GetMetric() {
		ttft[key(m)] = m.GetHistogram()
	}
	sums, counts := map[string]float64{}, map[string]map[string]uint64{}
	for _, m := range fams["llmprobe_ttft_component_seconds"].GetMetric() {
		k := key(m)
		sums[k] += m.GetHistogram().GetSampleSum()
		if counts[k] == nil {
			counts[k] = map[string]uint64{}
		}
		for _, l := range m.GetLabel() {
			if l.GetName() == "component" {
				counts[k][l.GetValue()] = m.GetHistogram().GetSampleCount()
			}
		}
	}
	for k, h := range ttft {
		if math.Abs(sums[k]-h.GetSampleSum()) > 1e-6 {
			t.Errorf("%s: components add up to %gs, TTFT's sum is %gs", k, sums[k], h.GetSampleSum())
		}
		n := h.GetSampleCount()
		want := []string{prober.ComponentDispatch, prober.ComponentConnect, prober.ComponentEngineQueue, prober.ComponentEnginePrefill, prober.ComponentNetwork}
		if strings.Contains(k, "traffic=burst") {
			want = append(want, prober.ComponentClientQueue)
		}
		for _, c := range want {
			if counts[k][c] != n {
				t.Errorf("%s: %s observed %d times, TTFT %d", k, c, counts[k][c], n)
			}
		}
		if got := counts[k][prober.ComponentServerOther]; got != 0 {
			t.Errorf("%s: %d requests without the engine's split", k, got)
		}
	}
}
