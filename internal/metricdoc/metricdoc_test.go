package metricdoc

import (
	"slices"
	"testing"
)

func TestReadContract(t *testing.T) {
	metrics, err := Read("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Metric{}
	for _, m := range metrics {
		byName[m.Name] = m
	}
	if len(metrics) < 40 {
		t.Fatalf("only %d metrics read from docs/metrics.md", len(metrics))
	}
	checks := map[string]Metric{
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
