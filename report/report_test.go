package report

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// A write that breaks off leaves the old file, and no temporary file behind.
func TestStoreWritesAtomically(t *testing.T) {
	dir := t.TempDir()
	store := NewStore(dir, nil)
	rep := &Report{ID: ID("b", time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)), Burst: "b"}
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
