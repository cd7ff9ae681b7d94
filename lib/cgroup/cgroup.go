// Package cgroup reads this process's CPU throttling from its cgroup, v1 or v2.
package cgroup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Throttling is what the CFS quota cost the cgroup since it was made: the
// time its tasks were held off their CPUs and the periods in which they were.
type Throttling struct {
	Time    time.Duration
	Periods uint64
}

// Sub is t less an earlier reading.
func (t Throttling) Sub(earlier Throttling) Throttling {
	return Throttling{Time: t.Time - earlier.Time, Periods: t.Periods - earlier.Periods}
}

// Stat reads one cgroup's cpu.stat; Open finds this process's.
type Stat struct {
	// Path is the cpu.stat file read.
	Path string
	// v2: throttled_usec (µs), else v1's throttled_time (ns).
	v2 bool
	// file stays open between reads, each a pread from its start: opening
	// it anew each time cost most of a reading. It is opened again when
	// the path names another file (info is the open one's).
	mu   sync.Mutex
	file *os.File
	info os.FileInfo
}

// ErrNoCgroup says the process is in no cgroup with a CPU controller.
var ErrNoCgroup = errors.New("no cgroup with a cpu controller")

// Open finds the cpu.stat of this process's cgroup under root ("/" on a
// live system; a fixture's directory in tests): the v1 cpu controller's
// where one is mounted, else the v2 hierarchy's. Inside a container's
// cgroup namespace the process's path is not under the mount: its
// mount's own cpu.stat is the cgroup's.
func Open(root string) (*Stat, error) {
	path, v2, err := ownCgroup(filepath.Join(root, "proc/self/cgroup"))
	if err != nil {
		return nil, err
	}
	mount, mountRoot, err := mountPoint(filepath.Join(root, "proc/self/mountinfo"), v2)
	if err != nil {
		return nil, err
	}
	if rel, ok := strings.CutPrefix(path, mountRoot); ok {
		path = rel
	}
	dirs := []string{filepath.Join(root, mount)}
	if !strings.HasPrefix(path, "/..") { // a path above the namespace's root is not under the mount
		dirs = append([]string{filepath.Join(root, mount, path)}, dirs...)
	}
	for _, dir := range dirs {
		s := &Stat{Path: filepath.Join(dir, "cpu.stat"), v2: v2}
		if _, err := os.Stat(s.Path); err != nil {
			continue
		}
		if _, err := s.Read(); err != nil {
			_ = s.Close()
			return nil, err
		}
		return s, nil
	}
	return nil, fmt.Errorf("%w: no cpu.stat in %s", ErrNoCgroup, strings.Join(dirs, " or "))
}

// ownCgroup is the process's cgroup path from its /proc/<pid>/cgroup file:
// the v1 line whose controllers include cpu ("4:cpu,cpuacct:/path"), else
// the v2 line ("0::/path").
func ownCgroup(file string) (path string, v2 bool, err error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", false, err
	}
	unified := ""
	for n, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		id, rest, ok1 := strings.Cut(line, ":")
		controllers, p, ok2 := strings.Cut(rest, ":")
		if !ok1 || !ok2 || !strings.HasPrefix(p, "/") {
			return "", false, fmt.Errorf("%s line %d: %q is not hierarchy-ID:controllers:/path", file, n+1, line)
		}
		switch {
		case slices.Contains(strings.Split(controllers, ","), "cpu"):
			return p, false, nil
		case id == "0" && controllers == "":
			unified = p
		}
	}
	if unified == "" {
		return "", false, fmt.Errorf("%w: %s names neither a v1 cpu controller nor a v2 hierarchy", ErrNoCgroup, file)
	}
	return unified, true, nil
}

// mountPoint is where the v1 cpu controller (or the v2 hierarchy) is
// mounted, and the cgroup the mount shows as its root, from a mountinfo
// file: "id parent major:minor root mountpoint options [optional...] -
// fstype source superoptions".
func mountPoint(file string, v2 bool) (mount, root string, err error) {
	f, err := os.Open(file)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		sep := slices.Index(fields, "-")
		if sep < 5 || len(fields) < sep+4 {
			return "", "", fmt.Errorf("%s line %d: %q has no root, mount point and \"- fstype source options\"", file, n, sc.Text())
		}
		fstype, options := fields[sep+1], strings.Split(fields[sep+3], ",")
		if (v2 && fstype == "cgroup2") || (!v2 && fstype == "cgroup" && slices.Contains(options, "cpu")) {
			return unescape(fields[4]), unescape(fields[3]), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", "", fmt.Errorf("%s: %w", file, err)
	}
	kind := "cgroup v1 mount with the cpu controller"
	if v2 {
		kind = "cgroup2 mount"
	}
	return "", "", fmt.Errorf("%w: %s has no %s", ErrNoCgroup, file, kind)
}

// unescape undoes mountinfo's octal escapes of space, tab, newline and backslash.
func unescape(s string) string {
	for _, c := range []string{`\040`, `\011`, `\012`, `\134`} {
		v, _ := strconv.ParseUint(c[1:], 8, 8)
		s = strings.ReplaceAll(s, c, string(rune(v)))
	}
	return s
}

// Close closes the file kept open between reads.
func (s *Stat) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file == nil {
		return nil
	}
	err := s.file.Close()
	s.file = nil
	return err
}

// contents reads the whole file from its start, opening it if it is not.
func (s *Stat) contents() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now, err := os.Stat(s.Path)
	if err != nil {
		return nil, err
	}
	if s.file == nil || !os.SameFile(now, s.info) {
		if s.file != nil {
			_ = s.file.Close()
		}
		f, err := os.Open(s.Path)
		if err != nil {
			s.file = nil
			return nil, err
		}
		s.file, s.info = f, now
	}
	b := make([]byte, 0, 1024)
	for {
		n, err := s.file.ReadAt(b[len(b):cap(b)], int64(len(b)))
		b = b[:len(b)+n]
		switch {
		case errors.Is(err, io.EOF):
			return b, nil
		case err != nil:
			return nil, err
		case len(b) == cap(b):
			b = slices.Grow(b, len(b))
		}
	}
}

// Read reads the cgroup's throttling now.
func (s *Stat) Read() (Throttling, error) {
	b, err := s.contents()
	if err != nil {
		return Throttling{}, err
	}
	timeField, unit := "throttled_time", time.Nanosecond
	if s.v2 {
		timeField, unit = "throttled_usec", time.Microsecond
	}
	var t Throttling
	var sawTime, sawPeriods bool
	for line := range bytes.Lines(b) {
		name, value, _ := strings.Cut(strings.TrimSpace(string(line)), " ")
		if name != timeField && name != "nr_throttled" {
			continue
		}
		v, err := strconv.ParseUint(value, 10, 64)
		if err != nil {
			return Throttling{}, fmt.Errorf("%s: field %s: %q is not a count", s.Path, name, value)
		}
		if name == "nr_throttled" {
			t.Periods, sawPeriods = v, true
		} else {
			t.Time, sawTime = time.Duration(v)*unit, true
		}
	}
	if !sawTime || !sawPeriods {
		return Throttling{}, fmt.Errorf("%s: no %s and nr_throttled fields (is the cpu controller enabled for this cgroup?)", s.Path, timeField)
	}
	return t, nil
}
