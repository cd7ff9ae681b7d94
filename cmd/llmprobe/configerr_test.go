package main

import (
	"os/exec"
	"strings"
	"testing"
)

// A configuration error exits 2 in every command that reads a
// configuration, each error said with its file and line: the daemon's
// --config.check and its start, gate and compare.
func TestConfigErrorsExit2InEveryCommand(t *testing.T) {
	const path = "../../config/testdata/every_error.yml"
	want := []string{
		path + ":11: bursts[0].arrival.rate: 0 must be within [",
		path + `:13: bursts[0].max_concurency: unknown field "max_concurency"`,
	}
	for name, args := range map[string][]string{
		"config.check": {"--config.file=" + path, "--config.check"},
		"serve":        {"--config.file=" + path, "--web.listen-address=127.0.0.1:0", "--no-collector.gpu", "--storage.path="},
		"gate":         {"gate", "--config.file=" + path, "--burst=b", "--storage.path=", "--no-collector.gpu"},
		"compare":      {"compare", "--config.file=" + path, "--burst=b"},
	} {
		t.Run(name, func(t *testing.T) {
			out, err := exec.Command(binPath, args...).CombinedOutput()
			if code := exitCode(err); code != 2 {
				t.Errorf("exit %d, want 2\n%s", code, out)
			}
			for _, w := range want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output does not say %q:\n%s", w, out)
				}
			}
		})
	}
}

// --config.check on a file with one mistake of each kind prints every one
// in one run, each at its own field and line, the files it names included.
func TestConfigCheckNamesEveryMistake(t *testing.T) {
	const path = "../../config/testdata/every_kind.yml"
	out, err := exec.Command(binPath, "--config.file="+path, "--config.check").CombinedOutput()
	if code := exitCode(err); code != 2 {
		t.Errorf("exit %d, want 2\n%s", code, out)
	}
	for _, w := range []string{
		path + `:4: targets[0].url: "localhost:8000" must be an absolute http or https URL`,
		path + `:4: targets[0].http_client_config.bearer_token_file: cannot be read:`,
		path + `:6: scenarios[0].slo.ttft: invalid duration "500"`,
		path + `:7: scenarios[1].golden.file: cannot be read:`,
		path + `:9: bursts[0].colour: unknown field "colour"`,
		path + `:9: bursts[0].target: unknown target "vllm-b"; did you mean "vllm-a"?`,
		path + `:9: bursts[0].scenarios[0].scenario: unknown scenario "chta"; did you mean "chat"?`,
		path + `:9: bursts[0].arrival.rate: 0 must be within [0.001, 100000]`,
	} {
		if !strings.Contains(string(out), w) {
			t.Errorf("output does not say %q:\n%s", w, out)
		}
	}
}

// A flag given a word where a number or a duration belongs is named, with
// the form it wants.
func TestFlagErrorsNameTheFlag(t *testing.T) {
	for args, want := range map[string]string{
		"gate --rate=RATE":           `llmprobe: --rate: "RATE" is not a number, like 20 or 0.5`,
		"gate --duration=abc":        `llmprobe: --duration: "abc" is not a duration, like 500ms, 2s or 1m`,
		"sim --sim.decode-base fast": `llmprobe: --sim.decode-base: "fast" is not a duration, like 500ms, 2s or 1m`,
	} {
		out, err := exec.Command(binPath, strings.Fields(args)...).CombinedOutput()
		if code := exitCode(err); code != 2 || !strings.Contains(string(out), want) {
			t.Errorf("llmprobe %s: exit %d, %q; want 2 and %q", args, code, out, want)
		}
	}
}
