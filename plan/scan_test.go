package plan

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A trace file is read relative to the configuration's directory, and the
// load counts the part the burst replays: that count is the burst's bound.
func TestTraceLoad(t *testing.T) {
	dir := t.TempDir()
	trace, err := os.ReadFile("../replay/testdata/mooncake_sample.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "m.jsonl"), trace, 0o600); err != nil {
		t.Fatal(err)
	}
	yml := `
targets: [{name: a, url: "http://x:1"}]
scenarios: [{name: s}]
bursts:
  - {name: b, target: a, scenarios: [{scenario: s}], arrival: {process: trace, file: m.jsonl, speedup: 2}, warmup: {requests: 1}, duration: 3s}
`
	path := filepath.Join(dir, "c.yml")
	if err := os.WriteFile(path, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := File(path)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := p.Burst("b")
	if b.Arrival.File != filepath.Join(dir, "m.jsonl") {
		t.Errorf("file %q, want it beside the configuration", b.Arrival.File)
	}
	// At 2x: warmup 0; measured from 0 for 3 s: 0 760 1526 1750 | 3500.5.
	s := b.Trace
	if s == nil || s.Format != "mooncake" || s.Warmup != 1 || s.Measured != 4 || s.Span != 1750*time.Millisecond {
		t.Fatalf("scan %+v, want mooncake, 1 warmup, 4 measured over 1.75s", s)
	}
	if w, m := b.Requests(123); w != 1 || m != 4 {
		t.Errorf("planned %d+%d, want the trace's 1+4", w, m)
	}
	if r := b.Rates(); len(r) != 1 || r[0] != 4/1.75 {
		t.Errorf("rates %v, want the replayed part's mean 4/1.75s", r)
	}
}
