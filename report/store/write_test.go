package store_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/lib/redact"
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

// Report files are 0644, as CI uploads and other users read them;
// CreateTemp alone would leave them 0600.
func TestFilesAreWorldReadable(t *testing.T) {
	dir := t.TempDir()
	md, js := filepath.Join(dir, "summary.md"), filepath.Join(dir, "report.json")
	if err := store.WriteFile(md, nil, func(w io.Writer) error { _, err := io.WriteString(w, "# x\n"); return err }); err != nil {
		t.Fatal(err)
	}
	if err := store.WriteJSON(js, &report.Report{Burst: "b"}, nil); err != nil {
		t.Fatal(err)
	}
	stored := store.New(filepath.Join(dir, "data"), nil)
	if err := stored.Save(&report.Report{ID: "b-20261125T120000Z", Burst: "b"}, 10); err != nil {
		t.Fatal(err)
	}
	kept, _ := filepath.Glob(filepath.Join(dir, "data", "b", "*.json"))
	for _, p := range append([]string{md, js}, kept...) {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: %v, mode %v; want 0644", p, err, fi.Mode().Perm())
		}
	}
	if len(kept) != 1 {
		t.Errorf("stored reports %v", kept)
	}
}
