package cgroup

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestOpenFixtures(t *testing.T) {
	for _, c := range []struct {
		root, path string
		want       Throttling
	}{
		{"v2", "sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/cri-containerd-1a2b.scope/cpu.stat", Throttling{3402119 * time.Microsecond, 87}},
		{"v1", "sys/fs/cgroup/cpu,cpuacct/kubepods/burstable/pod9/c3/cpu.stat", Throttling{1250 * time.Millisecond, 31}},
		// The container's own cgroup is the mount's root.
		{"v1-container", "sys/fs/cgroup/cpu,cpuacct/cpu.stat", Throttling{40 * time.Millisecond, 2}},
		// A path above the namespace's root: the mount's own cpu.stat.
		{"v2-namespace", "sys/fs/cgroup/cpu.stat", Throttling{95 * time.Millisecond, 1}},
	} {
		t.Run(c.root, func(t *testing.T) {
			root := filepath.Join("testdata", c.root)
			s, err := Open(root)
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(root, c.path); s.Path != want {
				t.Errorf("read %s, want %s", s.Path, want)
			}
			got, err := s.Read()
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("throttling %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestOpenRefusesWithTheFile(t *testing.T) {
	for _, c := range []struct {
		root   string
		noCPU  bool     // ErrNoCgroup: n/a rather than broken
		saying []string // in the error
	}{
		{"garbage-cgroup", false, []string{"garbage-cgroup/proc/self/cgroup line 1", "this is not a cgroup file"}},
		{"garbage-mountinfo", false, []string{"garbage-mountinfo/proc/self/mountinfo line 1", "fstype"}},
		{"garbage-stat", false, []string{"garbage-stat/sys/fs/cgroup/app/cpu.stat", "field nr_throttled", `"lots"`}},
		{"v2-nocpu", false, []string{"v2-nocpu/sys/fs/cgroup/app/cpu.stat", "no throttled_usec"}},
		{"v1-unmounted", true, []string{"v1-unmounted/proc/self/mountinfo has no cgroup v1 mount with the cpu controller"}},
		{"absent", false, []string{"absent/proc/self/cgroup"}},
	} {
		t.Run(c.root, func(t *testing.T) {
			_, err := Open(filepath.Join("testdata", c.root))
			if err == nil {
				t.Fatal("opened")
			}
			for _, s := range c.saying {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if errors.Is(err, ErrNoCgroup) != c.noCPU {
				t.Errorf("error %q: ErrNoCgroup is %v, want %v", err, !c.noCPU, c.noCPU)
			}
		})
	}
}

// A cgroup mounted where the path has a space, as mountinfo escapes it.
func TestOpenUnescapesMountPoint(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("proc/self/cgroup", "0::/a\n")
	write("proc/self/mountinfo", `25 22 0:23 / /cg\040root rw - cgroup2 cgroup2 rw`+"\n")
	write("cg root/a/cpu.stat", "nr_throttled 3\nthrottled_usec 7\n")
	s, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Read(); err != nil || got != (Throttling{7 * time.Microsecond, 3}) {
		t.Errorf("read %+v, %v", got, err)
	}
}
