package config_test

import (
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config"
)

// One mistake of each kind in one flow-style file: a bad duration, a value
// out of range, an unknown key, unknown target and scenario names and a URL
// without a scheme. One run reports all of them, each at the field it is
// about (a duration's error no longer lands on the last key of its line,
// nor hides the rest), with "did you mean" for names. The files it names
// are read by the daemon's checks: cmd/llmprobe's test holds those too.
func TestEveryKindOfMistakeInOneRun(t *testing.T) {
	const path = "testdata/every_kind.yml"
	_, err := config.LoadFile(path)
	if err == nil {
		t.Fatal("loaded without error")
	}
	want := []string{
		path + `:4: targets[0].url: "localhost:8000" must be an absolute http or https URL like http://host:8000`,
		path + `:6: scenarios[0].slo.ttft: invalid duration "500" (use a form like 500ms, 2s or 1m)`,
		path + `:9: bursts[0].colour: unknown field "colour"`,
		path + `:9: bursts[0].target: unknown target "vllm-b"; did you mean "vllm-a"?`,
		path + `:9: bursts[0].scenarios[0].scenario: unknown scenario "chta"; did you mean "chat"?`,
		path + `:9: bursts[0].arrival.rate: 0 must be within [0.001, 100000] requests per second`,
	}
	if got := strings.Split(err.Error(), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", err, strings.Join(want, "\n"))
	}
}
