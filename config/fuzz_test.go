package config_test

import (
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
)

// The loader never panics and never hangs on any input; its errors name no
// Go type; what it accepts renders and equals itself (plan's
// FuzzBounds holds what it accepts to the limits). The seeds are every
// configuration in testdata, good and bad, so `go test` replays them.
func FuzzParse(f *testing.F) {
	testkit.Seed(f, "testdata/*.yml")
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			return // a configuration file, not a corpus
		}
		cfg, err := config.Parse(data, "fuzz.yml")
		if err != nil {
			msg := err.Error()
			for _, goism := range []string{"*config.", "config.plain", "reflect.", "interface {}", "[]config.", "workload.", "field."} {
				if strings.Contains(msg, goism) {
					t.Fatalf("the error shows Go's %q:\n%s", goism, msg)
				}
			}
			return
		}
		if _, err := cfg.Redacted(); err != nil {
			t.Fatalf("an accepted configuration does not render: %v", err)
		}
		if !config.Equal(cfg, cfg) {
			t.Fatal("a configuration is not Equal to itself")
		}
	})
}
