package collector

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/target"
)

// Each target with engine_metrics is read on its own schedule: one whose
// page fails says so (success 0, no latency series) and does not stop the
// other, whose figures over the last interval are exported; a reload that
// drops engine_metrics stops its reads and its series go.
func TestEngineMetricsBesideCanaries(t *testing.T) {
	srv, _ := testkit.StartSim(t, nil)
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "metrics are off", http.StatusNotImplemented)
	}))
	defer broken.Close()
	yaml := fmt.Sprintf(`targets:
  - {name: good, url: %q, model: m, engine_metrics: {}}
  - {name: bad, url: %q, model: m, engine_metrics: {url: %q}}
scenarios: [{name: s}]
`, srv.URL, srv.URL, broken.URL+"/metrics")
	cfg := testkit.Config(t, yaml)
	for i := range cfg.Targets {
		cfg.Targets[i].EngineMetrics.Interval = config.Duration(100 * time.Millisecond) // below the configurable 5 s, for the test
	}
	set := target.NewSet(log.NewNopLogger())
	defer set.Stop()
	set.Apply(context.Background(), cfg)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewEngine(set))

	// Traffic for the good engine to count, then two reads around it.
	go func() {
		for range 3 {
			resp, err := http.Post(srv.URL+"/v1/completions", "application/json", strings.NewReader(`{"model":"m","prompt":"hi","max_tokens":3}`))
			if err == nil {
				resp.Body.Close()
			}
		}
	}()
	testkit.WaitUntil(t, "the good engine's ttft over an interval with requests", 10*time.Second, func() bool {
		return findMetric(t, reg, "llmprobe_engine_latency_mean_seconds", map[string]string{"target": "good", "metric": "ttft"}) != nil
	})
	if m := findMetric(t, reg, "llmprobe_engine_scrape_success", map[string]string{"target": "good"}); m.GetGauge().GetValue() != 1 {
		t.Errorf("good success %v", m)
	}
	if m := findMetric(t, reg, "llmprobe_engine_latency_seconds", map[string]string{"target": "good", "metric": "queue", "percentile": "p99"}); m == nil {
		t.Error("no queue p99 for the good engine")
	}
	if m := findMetric(t, reg, "llmprobe_engine_scrape_success", map[string]string{"target": "bad"}); m == nil || m.GetGauge().GetValue() != 0 {
		t.Errorf("bad success %v", m)
	}
	if m := findMetric(t, reg, "llmprobe_engine_latency_mean_seconds", map[string]string{"target": "bad"}); m != nil {
		t.Errorf("a failing page exports a figure: %v", m)
	}
	st, ok := set.Engine("bad")
	if !ok || st.Last == nil || !strings.Contains(st.Last.Error, "HTTP 501") {
		t.Errorf("bad state %+v", st.Last)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var page strings.Builder
	for _, f := range fams {
		if _, err := expfmt.MetricFamilyToText(&page, f); err != nil {
			t.Fatal(err)
		}
	}
	testkit.PromtoolCheckMetrics(t, page.String())

	// A reload without engine_metrics for good: its reads stop, its series go.
	cfg2 := testkit.Config(t, fmt.Sprintf("targets: [{name: good, url: %q, model: m}]\nscenarios: [{name: s}]\n", srv.URL))
	set.Apply(context.Background(), cfg2)
	if _, ok := set.Engine("good"); ok {
		t.Error("good still has engine metrics")
	}
	if m := findMetric(t, reg, "llmprobe_engine_scrape_success", nil); m != nil {
		t.Errorf("series left after the reload: %v", m)
	}
}
