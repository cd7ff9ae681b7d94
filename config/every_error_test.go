package config_test

import (
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config"
)

// An unknown key no longer hides the range errors of the same file: one
// run reports all three, each with its line and the range, in line order;
// the field a typo meant is not reported missing as well.
func TestUnknownFieldBesideRangeErrors(t *testing.T) {
	yml := `targets:
  - name: a
    url: http://x:1
scenarios:
  - name: s
bursts:
  - name: b
    target: a
    scenarios: [{scenario: s}]
    arrival: {process: poisson, rate: 0}
    requests: 10
    max_concurency: 4
    keep: 5000
  - name: c
    target: a
    scenarios: [{scenario: s}]
    arrival: {process: poisson, rat: 5}
    requests: 10
`
	_, err := config.Parse([]byte(yml), "c.yml")
	if err == nil {
		t.Fatal("loaded without error")
	}
	want := []string{
		`c.yml:10: bursts[0].arrival.rate: 0 must be within [`,
		`c.yml:12: bursts[0].max_concurency: unknown field "max_concurency"; did you mean "max_concurrency"?`,
		`c.yml:13: bursts[0].keep: 5000 must be within [1, 1000] reports`,
		`c.yml:17: bursts[1].arrival.rat: unknown field "rat"; did you mean "rate"?`,
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%v", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("error %d = %q, want it to start %q", i, lines[i], w)
		}
	}
}
