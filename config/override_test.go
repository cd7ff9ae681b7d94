package config

import (
	"strings"
	"testing"
	"time"
)

const overrideYAML = `targets:
  - {name: a, url: "http://a:8000", model: m1}
  - {name: b, url: "http://b:8000"}
scenarios: [{name: s, prompt_tokens: 16, output_tokens: 4}]
bursts:
  - {name: release-check, target: a, scenarios: [{scenario: s}], arrival: {rate: 2}, requests: 20}
  - {name: nightly, target: a, scenarios: [{scenario: s}], arrival: {rate: 1}, duration: 1m, sweep: {rates: [1, 2, 4]}}
  - {name: smoke, target: b, scenarios: [{scenario: s}], arrival: {rate: 1}, requests: 5}
`

func TestLookupBurstSuggests(t *testing.T) {
	cfg, err := Parse([]byte(overrideYAML), "t.yml")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := cfg.LookupBurst("smoke"); err != nil || b.Target != "b" {
		t.Errorf("smoke: %+v %v", b, err)
	}
	for name, want := range map[string]string{
		"relase-check": `unknown burst "relase-check" (did you mean "release-check"?); configured: release-check, nightly, smoke`,
		"nighty":       `unknown burst "nighty" (did you mean "nightly"?); configured: release-check, nightly, smoke`,
		"weekly":       `unknown burst "weekly"; configured: release-check, nightly, smoke`,
	} {
		if _, err := cfg.LookupBurst(name); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", name, err, want)
		}
	}
}

func TestOverridden(t *testing.T) {
	cfg, err := Parse([]byte(overrideYAML), "t.yml")
	if err != nil {
		t.Fatal(err)
	}
	rate, d := 7.5, 30*time.Second
	got, err := cfg.Overridden("nightly", Override{URL: "https://staging:8443", Model: "m2", Rate: &rate, Duration: &d})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := got.Burst("nightly")
	tgt, _ := got.Target("a")
	if b.Arrival.Rate != 7.5 || b.Sweep != nil || b.Duration.Std() != d || b.Requests != 0 || tgt.URL != "https://staging:8443" || tgt.Model != "m2" {
		t.Errorf("overridden: burst %+v target %+v", b, tgt)
	}
	// The loaded configuration is left as it was.
	b, _ = cfg.Burst("nightly")
	tgt, _ = cfg.Target("a")
	if b.Arrival.Rate != 1 || b.Sweep == nil || tgt.URL != "http://a:8000" || tgt.Model != "m1" {
		t.Errorf("the original changed: burst %+v target %+v", b, tgt)
	}
	// A duration replaces a request count.
	got, err = cfg.Overridden("release-check", Override{Duration: &d})
	if b, _ := got.Burst("release-check"); err != nil || b.Requests != 0 || b.Duration.Std() != d {
		t.Errorf("duration over requests: %+v %v", b, err)
	}

	f := func(v float64) *float64 { return &v }
	dur := func(v time.Duration) *time.Duration { return &v }
	for name, tc := range map[string]struct {
		o    Override
		want string
	}{
		"absurd rate":   {Override{Rate: f(1e9)}, "--rate: 1e+09 must be within [0.001, 100000] requests per second"},
		"zero rate":     {Override{Rate: f(0)}, "--rate: 0 must be within [0.001, 100000]"},
		"long duration": {Override{Duration: dur(48 * time.Hour)}, "--duration: 2d must be within [1s, 1d]"},
		"zero duration": {Override{Duration: dur(0)}, "--duration: 0s must be positive"},
		"not a URL":     {Override{URL: "staging:8000"}, `--target.url: "staging:8000" must be an absolute http or https URL`},
		"credentials":   {Override{URL: "http://user:hunter22@staging"}, "--target.url: must not carry credentials"},
		"query":         {Override{URL: "staging/?api_key=hunter22"}, "--target.url: must not have a query"},
		"unknown burst": {Override{}, `unknown burst "nope"`},
	} {
		burst := "release-check"
		if name == "unknown burst" {
			burst = "nope"
		}
		_, err := cfg.Overridden(burst, tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter22") {
			t.Errorf("%s: the error shows the secret: %v", name, err)
		}
	}
}
