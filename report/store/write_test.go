package store_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/redact"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/render"
	"github.com/llmprobe/llmprobe/report/store"
)

// Files are written whole, with secrets masked.
func TestWriteFileMasksSecrets(t *testing.T) {
	secrets := redact.New()
	secrets.Add([]string{"s3cr3t-token"})
	path := filepath.Join(t.TempDir(), "summary.md")
	stub := &report.Report{Burst: "b", Target: "t"}
	err := store.WriteFile(path, secrets, func(w io.Writer) error {
		return render.Markdown(w, stub, render.Check{Name: "preflight", Status: render.StatusError, Detail: "401: bad token s3cr3t-token"})
	})
	b, rerr := os.ReadFile(path)
	if err != nil || rerr != nil || strings.Contains(string(b), "s3cr3t-token") || !strings.Contains(string(b), redact.Mask) {
		t.Errorf("%v %v:\n%s", err, rerr, b)
	}
}
