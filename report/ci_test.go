package report_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/redact"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/internal/reporttest"
	"github.com/llmprobe/llmprobe/report/render"
)

// Files are written whole, with secrets masked.
func TestWriteFileMasksSecrets(t *testing.T) {
	secrets := redact.New()
	secrets.Add([]string{"s3cr3t-token"})
	path := filepath.Join(t.TempDir(), "summary.md")
	stub := &report.Report{Burst: "b", Target: "t"}
	err := report.WriteFile(path, secrets, func(w io.Writer) error {
		return render.Markdown(w, stub, render.Check{Name: "preflight", Status: render.StatusError, Detail: "401: bad token s3cr3t-token"})
	})
	b, rerr := os.ReadFile(path)
	if err != nil || rerr != nil || strings.Contains(string(b), "s3cr3t-token") || !strings.Contains(string(b), redact.Mask) {
		t.Errorf("%v %v:\n%s", err, rerr, b)
	}
}

// A run overridden on the command line is no baseline for a configured
// run, nor the other way round.
func TestOverriddenRunsAreNotCompared(t *testing.T) {
	before, _ := reporttest.GoldenPair(t)
	b, s := reporttest.GoldenBurst()
	fa := reporttest.Fixture(t, "run-after.json")
	rep := report.Build(b, fa.Run, report.Meta{Model: "m", Scenarios: []config.Scenario{s}})
	rep.Overrides = []string{"--rate=50"}
	rep.Judge(before)
	if rep.Regression != nil || !strings.Contains(rep.RegressionSkipped, `overrides "", this run "--rate=50"`) {
		t.Errorf("regression %+v, skipped %q", rep.Regression, rep.RegressionSkipped)
	}
}
