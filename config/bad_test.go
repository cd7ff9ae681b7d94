package config_test

import (
	"testing"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
)

// Each bad file's first line is "# want: <error>", with $FILE standing for
// the file's path; the loader's error must contain it. These are config's
// own rules; the files of the checks other packages own lie beside them
// (plan, prompt), and plan's compile runs them all together.
func TestBadConfigs(t *testing.T) {
	n := testkit.BadConfigs(t, "testdata/bad_*.yml", func(path string) error {
		_, err := config.LoadFile(path)
		return err
	})
	if n < 10 {
		t.Fatalf("want at least ten bad files, have %d", n)
	}
}
