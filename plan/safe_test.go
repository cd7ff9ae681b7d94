package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestReloadKeepsOldConfigOnError(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yml")
	good, err := os.ReadFile("../config/testdata/good.yml")
	if err != nil {
		t.Fatal(err)
	}
	write := func(data string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(string(good))
	reg := prometheus.NewRegistry()
	sc := NewSafe(reg)
	var applied []*Plan
	reload := func() (bool, error) {
		return sc.Reload(func() (*Plan, error) { return File(path) }, func(c *Plan) { applied = append(applied, c) })
	}
	if changed, err := reload(); err != nil || !changed {
		t.Fatalf("first load: changed=%v err=%v", changed, err)
	}
	first := sc.Get()
	if len(applied) != 1 || applied[0] != first {
		t.Fatalf("applied %d configurations, want the first one", len(applied))
	}
	write("# a comment changes nothing\n" + string(good))
	if changed, err := reload(); err != nil || changed {
		t.Fatalf("same configuration reloaded: changed=%v err=%v, want unchanged", changed, err)
	}
	bad, _ := os.ReadFile("../config/testdata/bad_url.yml")
	write(string(bad))
	if _, err := reload(); err == nil {
		t.Fatal("bad reload succeeded")
	}
	if sc.Get() != first || len(applied) != 1 {
		t.Fatal("bad reload replaced the running config")
	}
	if v := testutil.ToFloat64(sc.reloadSuccess); v != 0 {
		t.Errorf("reload_successful = %v after a bad reload", v)
	}
	write(strings.Replace(string(good), "sk-bearer-secret", "sk-rotated", 1))
	if changed, err := reload(); err != nil || !changed {
		t.Fatalf("rotated secret: changed=%v err=%v, want a change", changed, err)
	}
	if v := testutil.ToFloat64(sc.reloadSuccess); v != 1 {
		t.Errorf("reload_successful = %v after a good reload", v)
	}
	if len(applied) != 2 || applied[1] != sc.Get() {
		t.Errorf("the running configuration is not the one applied last")
	}
}

// One reload at a time: a second Reload does not load while the first is
// still loading, so an older file can never be applied after a newer one.
func TestReloadsAreSerialized(t *testing.T) {
	sc := NewSafe(nil)
	cfg, err := File("../config/testdata/good.yml")
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	firstLoading := make(chan struct{})
	secondLoaded := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = sc.Reload(func() (*Plan, error) { close(firstLoading); <-release; return cfg, nil }, func(*Plan) {})
	}()
	<-firstLoading
	go func() {
		_, _ = sc.Reload(func() (*Plan, error) { close(secondLoaded); return cfg, nil }, func(*Plan) {})
	}()
	select {
	case <-secondLoaded:
		t.Fatal("a second reload loaded while the first was still loading")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	<-done
	<-secondLoaded
}
