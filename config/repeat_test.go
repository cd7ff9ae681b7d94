package config

import (
	"strings"
	"testing"
)

// repeat is bounded and goes with one rate, never a sweep.
func TestRepeat(t *testing.T) {
	const head = "targets: [{name: a, url: 'http://x:1'}]\nscenarios: [{name: s}]\nbursts:\n  - {name: b, target: a, scenarios: [{scenario: s}], requests: 10, "
	for _, tc := range []struct{ burst, want string }{
		{"arrival: {rate: 5}, repeat: 5}", ""},
		{"arrival: {rate: 5}}", ""},
		{"arrival: {rate: 5}, repeat: 31}", "bursts[0].repeat: 31 must be within [0, 30]"},
		{"arrival: {rate: 5}, repeat: -1}", "bursts[0].repeat: -1 must be within [0, 30]"},
		{"sweep: {rates: [1, 2]}, repeat: 3}", "bursts[0].repeat: repeats one rate; a sweep steps through rates"},
	} {
		cfg, err := Parse([]byte(head+tc.burst+"\n"), "c.yml")
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.burst, err)
		case tc.want == "" && cfg.Bursts[0].Repeat != 5 && strings.Contains(tc.burst, "repeat"):
			t.Errorf("%s: repeat %d", tc.burst, cfg.Bursts[0].Repeat)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want %q", tc.burst, err, tc.want)
		}
	}
}
