package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every example configuration passes --config.check.
func TestExamplesAreValid(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.yml")
	if len(files) < 7 {
		t.Fatalf("%d examples, want one per engine (vLLM, SGLang, TGI, llama.cpp, Ollama, TensorRT-LLM, hosted)", len(files))
	}
	for _, f := range files {
		out, err := exec.Command(binPath, "--config.file="+f, "--config.check").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "configuration is valid") {
			t.Errorf("%s: %v\n%s", f, err, out)
		}
	}
}

// make build stamps version, revision and build date through ldflags; both
// --version and llmprobe_build_info carry them.
func TestVersionStamping(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary again")
	}
	bin := filepath.Join(t.TempDir(), "llmprobe-stamped")
	pkg := "github.com/prometheus/common/version."
	ldflags := "-X " + pkg + "Version=9.8.7 -X " + pkg + "Revision=abc1234 -X " + pkg + "Branch=main -X " + pkg + "BuildDate=20261122-12:00:00"
	if out, err := exec.Command("go", "build", "-ldflags", ldflags, "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	for _, want := range []string{"9.8.7", "abc1234", "20261122-12:00:00"} {
		if err != nil || !strings.Contains(string(out), want) {
			t.Errorf("--version lacks %s: %v\n%s", want, err, out)
		}
	}
	d := startBinary(t, bin)
	if v, ok := sampleValue(d.metrics(t), "llmprobe_build_info", map[string]string{"version": "9.8.7", "revision": "abc1234"}); !ok || v != 1 {
		t.Error("llmprobe_build_info does not carry the stamped version")
	}
}
