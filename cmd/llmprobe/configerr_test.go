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
