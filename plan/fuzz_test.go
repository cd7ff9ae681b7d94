package plan

import (
	"testing"

	"github.com/llmprobe/llmprobe/internal/testkit"
)

// What the load accepts has a bounded footprint. The seeds are every
// configuration in config's and this package's testdata, good and bad, so
// `go test` replays them.
func FuzzBounds(f *testing.F) {
	testkit.Seed(f, "../config/testdata/*.yml", "testdata/*.yml")
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			return // a configuration file, not a corpus
		}
		p, err := Parse(data, "fuzz.yml")
		if err != nil {
			return
		}
		l := p.Config.Limits
		for _, b := range p.Bursts {
			if fp := b.Footprint; fp.Requests > l.MaxPlannedRequests || fp.Bytes > int64(l.MaxBurstMemory) {
				t.Fatalf("burst %s accepted with footprint %v past the limits %+v", b.Name, fp, l)
			}
		}
	})
}
