package alerts

import (
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/llmprobe/llmprobe/config"
)

// LLMProbeComparisonWorse holds for at least the longest window a
// comparison may have: it then needs significance over a whole window of
// pairs its first look did not see, so the looks every 15 s do not add up
// to false alarms.
func TestComparisonAlertHoldsAWindow(t *testing.T) {
	var f struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				For   string `yaml:"for"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(Rules, &f); err != nil {
		t.Fatal(err)
	}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.Alert != "LLMProbeComparisonWorse" {
				continue
			}
			d, err := time.ParseDuration(r.For)
			if err != nil {
				t.Fatalf("for: %v", err)
			}
			if d < config.MaxComparisonWindow {
				t.Errorf("for: %s, shorter than the longest comparison window (%s)", d, config.MaxComparisonWindow)
			}
			return
		}
	}
	t.Fatal("no rule LLMProbeComparisonWorse")
}
