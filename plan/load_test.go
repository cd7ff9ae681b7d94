package plan_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/plan"
)

// Every bad file of every package that checks a configuration fails the
// whole load with the message its own package's test holds it to: the
// checks compose without hiding or changing one another's errors.
func TestBadConfigs(t *testing.T) {
	for _, dir := range []string{"config", "plan", "prompt", "target"} {
		t.Run(dir, func(t *testing.T) {
			t.Chdir(filepath.Join("..", dir)) // the paths in the messages are relative to it
			testkit.BadConfigs(t, "testdata/bad_*.yml", func(path string) error {
				_, err := plan.File(path)
				return err
			})
		})
	}
}

// A file with problems for config, for a dataset and for a trace reports
// every one of them in one error, each with its line.
func TestEveryErrorInOneRun(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yml")
	yml := `targets: [{name: a, url: "ftp://x"}]
scenarios:
  - {name: s, prompt_dataset: {file: none.jsonl}}
  - {name: t}
bursts:
  - {name: b, target: a, scenarios: [{scenario: t}], arrival: {process: trace, file: none.csv}, requests: 5}
`
	if err := os.WriteFile(path, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := plan.File(path)
	if err == nil {
		t.Fatal("loaded")
	}
	for _, want := range []string{
		path + `:1: targets[0].url: "ftp://x" must be an absolute http or https URL`,
		path + ":3: scenarios[0].prompt_dataset.file: cannot be read: " + filepath.Join(dir, "none.jsonl") + ": no such file or directory",
		path + ":6: bursts[0].arrival.file: open " + filepath.Join(dir, "none.csv") + ": no such file or directory",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error:\n%v\nwant it to contain:\n%s", err, want)
		}
	}
}
