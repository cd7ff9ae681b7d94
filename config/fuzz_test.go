package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The loader never panics and never hangs on any input; what it accepts has
// a bounded footprint; its errors name no Go type. The seeds are every
// configuration in testdata, good and bad, so `go test` replays them.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			return // a configuration file, not a corpus
		}
		cfg, err := Parse(data, "fuzz.yml")
		if err != nil {
			msg := err.Error()
			for _, goism := range []string{"*config.", "config.plain", "reflect.", "interface {}", "[]config."} {
				if strings.Contains(msg, goism) {
					t.Fatalf("the error shows Go's %q:\n%s", goism, msg)
				}
			}
			return
		}
		for _, b := range cfg.Bursts {
			if fp := cfg.Footprint(b); fp.Requests > cfg.Limits.MaxPlannedRequests || fp.Bytes > int64(cfg.Limits.MaxBurstMemory) {
				t.Fatalf("burst %s accepted with footprint %v past the limits %+v", b.Name, fp, cfg.Limits)
			}
		}
		if _, err := cfg.Redacted(); err != nil {
			t.Fatalf("an accepted configuration does not render: %v", err)
		}
		if !Equal(cfg, cfg) {
			t.Fatal("a configuration is not Equal to itself")
		}
	})
}
