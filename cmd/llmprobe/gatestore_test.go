package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/report/store"
)

// An overridden gate stays out of the burst's history: the plain gate after
// it finds no previous report, and the history holds the plain run alone.
// Each run says where its report went.
func TestOverriddenGateStaysOutOfTheHistory(t *testing.T) {
	srv, _ := simServer(t)
	cfg := gateConfig(t, srv.URL, "2s")
	storage := t.TempDir()
	gate := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(binPath, append([]string{"gate", "--config.file=" + cfg, "--burst=release", "--storage.path=" + storage, "--no-collector.gpu"}, args...)...).CombinedOutput()
		if exitCode(err) != 0 {
			t.Fatalf("gate %v: exit %d\n%s", args, exitCode(err), out)
		}
		return string(out)
	}
	out := gate("--rate=30", "--target.url="+srv.URL)
	if want := "report not kept: an overridden run (--target.url=" + srv.URL + " --rate=30) stays out of the history of burst release in " + storage + "; --output=FILE writes it"; !strings.Contains(out, want) {
		t.Errorf("the overridden gate does not say %q:\n%s", want, out)
	}
	if list, _ := store.New(storage, nil).List(); len(list["release"]) != 0 {
		t.Fatalf("the overridden run is in the history: %v", list)
	}
	output := filepath.Join(t.TempDir(), "plain.json")
	out = gate("--output=" + output)
	plain, err := store.Read(output)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Regression != nil || plain.RegressionSkipped != "no previous report of burst release" {
		t.Errorf("the plain gate compared with %+v (skipped: %q), want no previous report", plain.Regression, plain.RegressionSkipped)
	}
	list, _ := store.New(storage, nil).List()
	if len(list["release"]) != 1 {
		t.Fatalf("history %v, want the plain run alone", list)
	}
	if want := "report kept in " + filepath.Join(storage, "release", list["release"][0]+".json"); !strings.Contains(out, want) {
		t.Errorf("the plain gate does not say %q:\n%s", want, out)
	}
}

// The default storage is data/ in the working directory, and an empty
// --storage.path keeps nothing: the folder the gate runs in holds no more
// than --output's file.
func TestGateStoragePath(t *testing.T) {
	srv, _ := simServer(t)
	cfg := gateConfig(t, srv.URL, "2s")
	for _, tc := range []struct {
		flags []string
		say   string
		files []string
	}{
		{nil, "report kept in data/release/release-", []string{"data"}},
		{[]string{"--storage.path="}, "report not kept: --storage.path is empty; --output=FILE writes it", nil},
		{[]string{"--storage.path=", "--output=r.json"}, "report not kept: --storage.path is empty; --output writes it to r.json", []string{"r.json"}},
	} {
		dir := t.TempDir()
		cmd := exec.Command(binPath, append([]string{"gate", "--config.file=" + cfg, "--burst=release", "--no-collector.gpu"}, tc.flags...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if exitCode(err) != 0 || !strings.Contains(string(out), tc.say) {
			t.Errorf("gate %v: exit %d, want 0 and %q\n%s", tc.flags, exitCode(err), tc.say, out)
		}
		entries, _ := os.ReadDir(dir)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if strings.Join(names, " ") != strings.Join(tc.files, " ") {
			t.Errorf("gate %v wrote %v into its folder, want %v", tc.flags, names, tc.files)
		}
	}
}
