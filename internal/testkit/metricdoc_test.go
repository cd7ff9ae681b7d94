package testkit

import (
	"slices"
	"testing"
)

func TestReadContract(t *testing.T) {
	metrics, err := ReadMetricDoc("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]DocumentedMetric{}
	for _, m := range metrics {
		byName[m.Name] = m
	}
	if len(metrics) < 40 {
		t.Fatalf("only %d metrics read from docs/metrics.md", len(metrics))
	}
	checks := map[string]DocumentedMetric{
		"llmprobe_requests_total":                {Type: "counter", Labels: []string{"model", "outcome", "scenario", "target", "traffic"}},
		"llmprobe_time_to_first_token_seconds":   {Type: "histogram", Labels: []string{"model", "scenario", "target", "traffic"}},
		"llmprobe_gpu_clock_hz":                  {Type: "gauge", Labels: []string{"clock", "gpu", "uuid"}},
		"llmprobe_config_last_reload_successful": {Type: "gauge"},
	}
	for name, want := range checks {
		got, ok := byName[name]
		if !ok || got.Type != want.Type || !slices.Equal(got.Labels, want.Labels) {
			t.Errorf("%s = %+v, want %+v", name, got, want)
		}
	}
}

// A label value in quotes is no metric name; a metric name outside quotes is.
func TestUndocumentedSkipsLabelValues(t *testing.T) {
	names := []string{"llmprobe_burst_passed"}
	expr := `max by (job) (llmprobe_burst_passed{job=~"llmprobe_gate|llmprobe_compare", burst="a\"llmprobe_x"}) + llmprobe_unknown_total`
	if got := UndocumentedMetrics(expr, names); len(got) != 1 || got[0] != "llmprobe_unknown_total" {
		t.Errorf("Undocumented = %v, want only llmprobe_unknown_total", got)
	}
}
