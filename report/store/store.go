// Package store keeps burst reports as files: written atomically with
// secrets masked, a number kept per burst, and read back by the one reader.
package store

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/llmprobe/llmprobe/lib/redact"
	"github.com/llmprobe/llmprobe/report"
)

// Store keeps burst reports as JSON files, dir/<burst>/<id>.json, each
// written atomically (temporary file, fsync, rename, fsync of the folder):
// a crash leaves the old file or the new one, never a torn one.
type Store struct {
	dir     string
	secrets *redact.Redactor
	mu      sync.Mutex
}

// New keeps reports in dir; an empty dir keeps nothing. Every report it
// writes passes through secrets (nil masks nothing).
func New(dir string, secrets *redact.Redactor) *Store {
	return &Store{dir: dir, secrets: secrets}
}

var safeIDRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]*$`)

// Where says where Save keeps r, or why it keeps it nowhere: a store
// without a folder keeps nothing, and an overridden run (gate's
// --target.url, --rate …) stays out of its burst's history, so that the
// regression verdicts and pages that read the history never take it for
// the burst.
func (s *Store) Where(r *report.Report) (path, why string) {
	switch {
	case s.dir == "":
		return "", "no storage folder"
	case len(r.Overrides) > 0:
		return "", fmt.Sprintf("an overridden run (%s) stays out of the history of burst %s in %s", strings.Join(r.Overrides, " "), r.Burst, s.dir)
	}
	return filepath.Join(s.dir, r.Burst, r.ID+".json"), ""
}

// Save writes the report where Where says, if anywhere, and removes the
// oldest beyond keep.
func (s *Store) Save(r *report.Report, keep int) error {
	if path, _ := s.Where(r); path == "" {
		return nil
	}
	if !safeIDRe.MatchString(r.Burst) || !safeIDRe.MatchString(r.ID) {
		return fmt.Errorf("report id %q of burst %q is not a safe file name", r.ID, r.Burst)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	dir := filepath.Join(s.dir, r.Burst)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeAtomic(dir, r.ID+".json", encoder(r, s.secrets)); err != nil {
		return err
	}
	ids, err := s.ids(r.Burst)
	if err != nil {
		return err
	}
	for len(ids) > keep {
		if err := os.Remove(filepath.Join(dir, ids[0]+".json")); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		ids = ids[1:]
	}
	return nil
}

// ids lists a burst's report ids, oldest first (ids end in a sortable UTC time).
func (s *Store) ids(burst string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(s.dir, burst))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue // temporary files of an interrupted write
		}
		ids = append(ids, strings.TrimSuffix(name, ".json"))
	}
	sort.Strings(ids)
	return ids, nil
}

// List returns the ids of every burst's reports, newest first per burst.
func (s *Store) List() (map[string][]string, error) {
	out := map[string][]string{}
	if s.dir == "" {
		return out, nil
	}
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !e.IsDir() || !safeIDRe.MatchString(e.Name()) {
			continue
		}
		ids, err := s.ids(e.Name())
		if err != nil {
			return nil, err
		}
		for i, j := 0, len(ids)-1; i < j; i, j = i+1, j-1 {
			ids[i], ids[j] = ids[j], ids[i]
		}
		out[e.Name()] = ids
	}
	return out, nil
}

// Load reads the report with the given id.
func (s *Store) Load(id string) (*report.Report, error) {
	burst, _, err := report.ParseID(id)
	if err != nil || s.dir == "" || !safeIDRe.MatchString(burst) || !safeIDRe.MatchString(id) {
		return nil, os.ErrNotExist
	}
	return Read(filepath.Join(s.dir, burst, id+".json"))
}

// Latest returns a burst's newest report, or nil. An overridden run's
// report, which a store of an older llmprobe may hold, is passed over: it
// is not the burst's.
func (s *Store) Latest(burst string) (*report.Report, error) {
	if s.dir == "" {
		return nil, nil
	}
	ids, err := s.ids(burst)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	r, err := s.Load(ids[len(ids)-1])
	if err != nil || len(r.Overrides) == 0 {
		return r, err
	}
	return s.latestWhere(burst, func(r *report.Report) bool { return true })
}

// LatestFrom returns a burst's newest report that measured the given facts
// (engine, version and model), or nil: the baseline of an upgrade run.
func (s *Store) LatestFrom(burst string, f report.Facts) (*report.Report, error) {
	return s.latestWhere(burst, func(r *report.Report) bool { return report.FactsOf(r) == f && r.Shard == nil })
}

// History returns a burst's kept reports, newest first, up to n: the
// runs a max_regression gate reads its figure's spread from. An
// unreadable one is passed over, its error returned with the rest.
func (s *Store) History(burst string, n int) ([]*report.Report, error) {
	if s.dir == "" {
		return nil, nil
	}
	ids, err := s.ids(burst)
	if err != nil {
		return nil, err
	}
	var out []*report.Report
	var firstErr error
	for i := len(ids) - 1; i >= 0 && len(out) < n; i-- {
		r, err := s.Load(ids[i])
		if err != nil {
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		if len(r.Overrides) == 0 && r.Shard == nil {
			out = append(out, r)
		}
	}
	return out, firstErr
}

// LatestUpgrade returns a burst's newest upgrade run's report, or nil.
func (s *Store) LatestUpgrade(burst string) (*report.Report, error) {
	return s.latestWhere(burst, func(r *report.Report) bool { return r.Upgrade != nil })
}

// latestWhere returns a burst's newest report that ok accepts. It reads
// back at most the reports the store keeps of the burst; an unreadable one
// is passed over, and its error returned if none is accepted.
func (s *Store) latestWhere(burst string, ok func(*report.Report) bool) (*report.Report, error) {
	if s.dir == "" {
		return nil, nil
	}
	ids, err := s.ids(burst)
	if err != nil {
		return nil, err
	}
	var firstErr error
	for i := len(ids) - 1; i >= 0; i-- {
		r, err := s.Load(ids[i])
		if err != nil {
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		if ok(r) && len(r.Overrides) == 0 {
			return r, nil
		}
	}
	return nil, firstErr
}
