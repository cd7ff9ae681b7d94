package plan

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/llmprobe/llmprobe/config"
)

// A changed dataset or golden set is a changed configuration, so a reload
// applies it.
func TestReloadSeesNewFile(t *testing.T) {
	for _, tc := range []struct {
		key, before, after string
	}{
		{"prompt_dataset", `{"conversations": [{"from": "human", "value": "first"}]}`, `{"conversations": [{"from": "human", "value": "second"}]}`},
		{"golden", `{"prompt": "capital of France?", "checks": {"contains": "Paris"}}`, `{"prompt": "capital of France?", "checks": {"contains": "paris"}}`},
	} {
		t.Run(tc.key, func(t *testing.T) {
			dir := t.TempDir()
			write := func(name, text string) {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			write("llmprobe.yml", "targets: [{name: a, url: 'http://x:1'}]\nscenarios: [{name: s, "+tc.key+": {file: p.jsonl}}]\n")
			write("p.jsonl", tc.before+"\n")
			cfgFile := filepath.Join(dir, "llmprobe.yml")
			a, err := File(cfgFile) // relative to the configuration, not the working directory
			if err != nil {
				t.Fatal(err)
			}
			b, _ := File(cfgFile)
			if !config.Equal(a, b) {
				t.Error("two loads of one file differ")
			}
			write("p.jsonl", tc.after+"\n")
			c, err := File(cfgFile)
			if err != nil {
				t.Fatal(err)
			}
			if config.Equal(a, c) {
				t.Error("a changed file is Equal to the old one: a reload would keep what it said before")
			}
		})
	}
}
