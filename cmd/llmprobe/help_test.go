package main

import (
	"os/exec"
	"strings"
	"testing"
)

// `llmprobe --flag` runs serve, so the top-level help lists serve's flags
// with their defaults; a command's own help lists its flags.
func TestHelpShowsTheDefaultCommandsFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--help"}, []string{
			"--log.level=info", "Commands:", "gate", "Flags of serve, the default command:",
			"--config.file=CONFIG.FILE", "--web.listen-address=:9479", `--storage.path="data"`, "--collector.gpu.timeout=2s", `--shard="0/1"`, "--[no-]metrics.classic-buckets",
		}},
		{[]string{"gate", "--help"}, []string{
			"usage: llmprobe gate", "--burst=BURST", "--target.url", "--target.model", "--rate", "--duration", "--output.junit", "--output.markdown",
			"--burst.shard=i/N", "--burst.start=TIME",
		}},
		{[]string{"report", "merge", "--help"}, []string{"usage: llmprobe report merge", "--output=OUTPUT", "--baseline=FILE", "<files>..."}},
		{[]string{"serve", "--help"}, []string{"usage: llmprobe serve", "--web.listen-address=:9479"}},
	} {
		out, err := exec.Command(binPath, tc.args...).CombinedOutput()
		if err != nil {
			t.Errorf("%v: %v\n%s", tc.args, err, out)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("llmprobe %s lacks %q:\n%s", strings.Join(tc.args, " "), w, out)
			}
		}
		// Only the top-level help adds the default command's flags.
		if got := strings.Contains(string(out), "the default command:"); got != (len(tc.args) == 1) {
			t.Errorf("llmprobe %s: default command's section shown = %v", strings.Join(tc.args, " "), got)
		}
	}
}
