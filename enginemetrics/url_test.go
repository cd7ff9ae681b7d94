package enginemetrics

import (
	"testing"

	"github.com/llmprobe/llmprobe/config"
)

// The engine's page is where the target says, else at its server root
// with the family's path.
func TestURL(t *testing.T) {
	for _, c := range []struct {
		target, family, url, want string
	}{
		{"http://h:8000/v1", config.EngineFamilyAuto, "", "http://h:8000/metrics"},
		{"http://h:8000/", config.EngineFamilyTRTLLM, "", "http://h:8000/prometheus/metrics"},
		{"http://h:8000", config.EngineFamilyVLLM, "http://h:9000/metrics", "http://h:9000/metrics"},
	} {
		tg := config.Target{URL: c.target, EngineMetrics: &config.EngineMetrics{Family: c.family, URL: c.url}}
		if got := URL(tg); got != c.want {
			t.Errorf("%s %s %s: %s, want %s", c.target, c.family, c.url, got, c.want)
		}
	}
	if URL(config.Target{URL: "http://h"}) != "" {
		t.Error("a target without engine_metrics has a URL for them")
	}
	// The example configuration's targets, one with engine_metrics' defaults.
	cfg, err := config.LoadFile("../config/testdata/good.yml")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"vllm-a": "http://127.0.0.1:8000/metrics", "llamacpp": "http://127.0.0.1:8080/metrics"} {
		if tg, _ := cfg.Target(name); URL(tg) != want {
			t.Errorf("%s: engine metrics at %s, want %s", name, URL(tg), want)
		}
	}
}
