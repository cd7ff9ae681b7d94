package plan

import (
	"testing"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
)

// What the load accepts has a bounded footprint. The seeds are every
// configuration in config's and this package's testdata, good and bad, so
// `go test` replays them.
func FuzzBounds(f *testing.F) {
	testkit.Seed(f, "../../config/testdata/*.yml", "testdata/*.yml")
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			return // a configuration file, not a corpus
		}
		cfg, err := config.Parse(data, "fuzz.yml", CheckTraces, CheckBounds)
		if err != nil {
			return
		}
		for _, b := range cfg.Bursts {
			if fp := BurstFootprint(cfg, b); fp.Requests > cfg.Limits.MaxPlannedRequests || fp.Bytes > int64(cfg.Limits.MaxBurstMemory) {
				t.Fatalf("burst %s accepted with footprint %v past the limits %+v", b.Name, fp, cfg.Limits)
			}
		}
	})
}
