package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
)

// Every problem of every comparison is reported at once, each with its line.
func TestComparisonErrorsAllAtOnce(t *testing.T) {
	_, err := config.Parse([]byte(`targets:
  - {name: base, url: "http://x:1"}
  - {name: cand, url: "http://x:2"}
scenarios:
  - name: s
comparisons:
  - {name: one, baseline: bse, candidate: cand, min_pairs: 2}
  - {name: one, baseline: base, candidate: nobody, tolerance: 2, scenarios: [t]}
`), "c.yml")
	if err == nil {
		t.Fatal("loaded")
	}
	for _, want := range []string{
		`c.yml:7: comparisons[0].baseline: unknown target "bse"; did you mean "base"?`,
		`c.yml:7: comparisons[0].min_pairs: 2 must be within [6, 5000] pairs`,
		`c.yml:8: comparisons[1].name: duplicate comparison name "one" (first at line 7)`,
		`c.yml:8: comparisons[1].candidate: unknown target "nobody"`,
		`c.yml:8: comparisons[1].tolerance: 2 must be within [0, 1]`,
		`c.yml:8: comparisons[1].scenarios[0]: unknown scenario "t"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// By default a comparison covers the canary scenarios both targets have,
// conversations left out, each at the baseline's canary interval.
func TestComparisonPairsDefault(t *testing.T) {
	cfg, err := config.Parse([]byte(`targets:
  - {name: base, url: "http://x:1"}
  - {name: cand, url: "http://x:2"}
  - {name: other, url: "http://x:3"}
scenarios:
  - name: short
  - name: long
  - name: talk
    conversation: {turns: 2}
  - name: solo
canary:
  interval: 10s
  probes:
    - {targets: [base, cand], scenarios: [short, talk]}
    - {targets: [base], scenarios: [long], interval: 5s}
    - {targets: [cand], scenarios: [long]}
    - {targets: [other], scenarios: [solo]}
comparisons:
  - {name: up, baseline: base, candidate: cand}
  - {name: named, baseline: other, candidate: cand, scenarios: [solo], window: 1m, min_pairs: 6, tolerance: 0.05}
`), "c.yml")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range cfg.ComparisonPairs() {
		got = append(got, p.Comparison.Name+"/"+p.Scenario+"/"+p.Interval.String())
	}
	want := "up/short/10s up/long/5s named/solo/10s"
	if strings.Join(got, " ") != want {
		t.Errorf("pairs %v, want %s", got, want)
	}
	up := cfg.Comparisons[0]
	if up.Window.Std() != time.Hour || up.MinPairs != 20 || up.Tolerance != 0.1 {
		t.Errorf("defaults: %+v", up)
	}
}
