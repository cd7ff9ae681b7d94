package config_test

import (
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config"
)

// An unknown key no longer hides the range errors of the same file: one
// run reports all four, each with its line and the range, in line order;
// the field a typo meant is not reported missing as well.
func TestUnknownFieldBesideRangeErrors(t *testing.T) {
	const path = "testdata/every_error.yml"
	_, err := config.LoadFile(path)
	if err == nil {
		t.Fatal("loaded without error")
	}
	want := []string{
		path + `:11: bursts[0].arrival.rate: 0 must be within [`,
		path + `:13: bursts[0].max_concurency: unknown field "max_concurency"; did you mean "max_concurrency"?`,
		path + `:14: bursts[0].keep: 5000 must be within [1, 1000] reports`,
		path + `:18: bursts[1].arrival.rat: unknown field "rat"; did you mean "rate"?`,
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
