package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/reporttest"
	"github.com/llmprobe/llmprobe/report"
)

// A write that breaks off leaves the old file, and no temporary file behind.
func TestStoreWritesAtomically(t *testing.T) {
	dir := t.TempDir()
	store := New(dir, nil)
	rep := &report.Report{ID: report.ID("b", time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)), Burst: "b"}
	if err := store.Save(rep, 5); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "b", rep.ID+".json")
	before, _ := os.ReadFile(path)
	broken := errors.New("disk full")
	err := writeAtomic(filepath.Dir(path), filepath.Base(path), func(w io.Writer) error {
		_, _ = w.Write([]byte(`{"id": "torn`))
		return broken
	})
	if !errors.Is(err, broken) {
		t.Fatalf("err = %v", err)
	}
	after, _ := os.ReadFile(path)
	if string(after) != string(before) {
		t.Fatal("an interrupted write changed the report")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("files left: %v", entries)
	}
	// A temporary file left by a crash is not a report.
	if err := os.WriteFile(filepath.Join(dir, "b", ".b-x.json.tmp-123"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	latest, err := store.Latest("b")
	if err != nil || latest.ID != rep.ID {
		t.Errorf("latest = %v, %v", latest, err)
	}
	// keep bounds the reports per burst.
	for i := range 4 {
		r := *rep
		r.ID = fmt.Sprintf("b-2027010%dT000000Z", i+1)
		if err := store.Save(&r, 3); err != nil {
			t.Fatal(err)
		}
	}
	list, _ := store.List()
	if len(list["b"]) != 3 || list["b"][0] != "b-20270104T000000Z" {
		t.Errorf("kept %v", list["b"])
	}
}

func TestStoreLatestFrom(t *testing.T) {
	s := New(t.TempDir(), nil)
	for _, r := range []*report.Report{
		reporttest.UpgradeRun("b-20200101T000000Z", "0.11.0", nil, nil),
		reporttest.UpgradeRun("b-20200102T000000Z", "0.11.0", nil, nil),
		reporttest.UpgradeRun("b-20200103T000000Z", "0.12.0", nil, nil),
	} {
		if err := s.Save(r, 10); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.LatestFrom("b", report.Facts{Engine: "vllm", Version: "0.11.0", Model: "m"})
	if err != nil || got == nil || got.ID != "b-20200102T000000Z" {
		t.Errorf("LatestFrom 0.11.0 = %v, %v; want b-20200102T000000Z", got, err)
	}
	if got, err := s.LatestFrom("b", report.Facts{Engine: "vllm", Version: "0.10.0", Model: "m"}); got != nil || err != nil {
		t.Errorf("LatestFrom 0.10.0 = %v, %v; want none", got, err)
	}
}

// The one reader refuses what is not a report, saying why, and a missing
// file is fs.ErrNotExist for callers that answer 404.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"notes.txt": "hello", "empty.json": "{}", "noburst.json": `{"id": "b-20261122T120000Z"}`,
		"good.json": `{"id": "b-20261122T120000Z", "burst": "b"}`} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{
		"missing.json": "missing.json does not exist; give a report file",
		"notes.txt":    "notes.txt is not a burst report: invalid character",
		"empty.json":   `empty.json is not a burst report: it has no "id" or no "burst"`,
		"noburst.json": `noburst.json is not a burst report: it has no "id" or no "burst"`,
	} {
		if _, err := Read(filepath.Join(dir, name)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
	if _, err := Read(filepath.Join(dir, "missing.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v is not fs.ErrNotExist", err)
	}
	if r, err := Read(filepath.Join(dir, "good.json")); err != nil || r.ID != "b-20261122T120000Z" || r.Burst != "b" {
		t.Errorf("a report: %+v, %v", r, err)
	}
	// The store reads through it: a missing id is not found, a torn file says so.
	s := New(dir, nil)
	if _, err := s.Load("b-20261122T120001Z"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing id: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b", "b-20261122T120000Z.json"), []byte(`{"id": "b-2026`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load("b-20261122T120000Z"); err == nil || !strings.Contains(err.Error(), "is not a burst report") {
		t.Errorf("a torn file: %v", err)
	}
}

// An overridden run stays out of its burst's history: Save writes nothing,
// and one that an older llmprobe wrote there is never the previous report.
func TestOverriddenRunsStayOutOfTheHistory(t *testing.T) {
	dir := t.TempDir()
	s := New(dir, nil)
	plain := &report.Report{ID: "b-20200101T000000Z", Burst: "b"}
	overridden := &report.Report{ID: "b-20200102T000000Z", Burst: "b", Overrides: []string{"--rate=5"}}
	if path, why := s.Where(overridden); path != "" || !strings.Contains(why, "--rate=5") {
		t.Errorf("Where(overridden) = %q, %q", path, why)
	}
	for _, r := range []*report.Report{plain, overridden} {
		if err := s.Save(r, 10); err != nil {
			t.Fatal(err)
		}
	}
	if list, _ := s.List(); len(list["b"]) != 1 || list["b"][0] != plain.ID {
		t.Errorf("history %v, want only %s", list["b"], plain.ID)
	}
	// As an older llmprobe kept it, beside the burst's own reports.
	if err := WriteJSON(filepath.Join(dir, "b", overridden.ID+".json"), overridden, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Latest("b"); err != nil || got == nil || got.ID != plain.ID {
		t.Errorf("Latest = %v, %v; want %s", got, err, plain.ID)
	}
	if got, err := s.History("b", 10); err != nil || len(got) != 1 || got[0].ID != plain.ID {
		t.Errorf("History = %v, %v; want only %s", got, err, plain.ID)
	}
}

// A burst's history, which a regression gate reads its spread from, is its
// newest reports first, as many as asked.
func TestHistory(t *testing.T) {
	s := New(t.TempDir(), nil)
	for _, id := range []string{"b-20200101T000000Z", "b-20200102T000000Z", "b-20200103T000000Z", "c-20200104T000000Z"} {
		if err := s.Save(&report.Report{ID: id, Burst: id[:1]}, 10); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.History("b", 2)
	if err != nil || len(got) != 2 || got[0].ID != "b-20200103T000000Z" || got[1].ID != "b-20200102T000000Z" {
		t.Errorf("History(b, 2) = %v, %v", got, err)
	}
}
