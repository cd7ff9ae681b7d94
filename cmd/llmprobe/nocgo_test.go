package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A static build (no cgo) compiles, runs, and says GPU metrics are unavailable.
func TestNoCgoBuildRunsItsStub(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary again")
	}
	bin := filepath.Join(t.TempDir(), "llmprobe-static")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build: %v\n%s", err, out)
	}
	d := startBinary(t, bin)
	fams := d.metrics(t)
	if v, ok := sampleValue(fams, "llmprobe_collector_success", map[string]string{"collector": "gpu"}); !ok || v != 0 {
		t.Errorf("collector_success{gpu} = %v (present %v), want 0", v, ok)
	}
	if !strings.Contains(d.logs(), "built without cgo") {
		t.Errorf("the log does not say why GPU metrics are missing:\n%s", d.logs())
	}
}
