package report

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/llmprobe/llmprobe/internal/redact"
)

// Store keeps burst reports as JSON files, dir/<burst>/<id>.json, each
// written atomically (temporary file, fsync, rename, fsync of the folder):
// a crash leaves the old file or the new one, never a torn one.
type Store struct {
	dir     string
	secrets *redact.Redactor
	mu      sync.Mutex
}

// NewStore uses dir; an empty dir keeps nothing. Every report it writes
// passes through secrets (nil masks nothing).
func NewStore(dir string, secrets *redact.Redactor) *Store {
	return &Store{dir: dir, secrets: secrets}
}

var safeIDRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]*$`)

// Save writes the report and removes the oldest beyond keep.
func (s *Store) Save(r *Report, keep int) error {
	if s.dir == "" {
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
	if err := writeAtomic(dir, r.ID+".json", r.encoder(s.secrets)); err != nil {
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

// WriteJSON writes the report to path as indented JSON, atomically.
// Secrets are masked as in the store.
func WriteJSON(path string, r *Report, secrets *redact.Redactor) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Dir(abs), filepath.Base(abs), r.encoder(secrets))
}

// encoder writes r as indented JSON, masked whole: the encoder makes one Write.
// A shard's report, an input to `llmprobe report merge` with a row per
// request, is written compact: indented, its rows would take three times
// the room.
func (r *Report) encoder(secrets *redact.Redactor) func(io.Writer) error {
	return func(w io.Writer) error {
		marshal := func(v any) ([]byte, error) { return json.MarshalIndent(v, "", "  ") }
		if r.Shard != nil {
			marshal = json.Marshal
		}
		b, err := marshal(r)
		if err != nil {
			return err
		}
		_, err = w.Write(append(secrets.Bytes(b), '\n'))
		return err
	}
}

// writeAtomic writes dir/name through a temporary file in the same folder.
func writeAtomic(dir, name string, write func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = write(tmp); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
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
func (s *Store) Load(id string) (*Report, error) {
	burst, _, err := ParseID(id)
	if err != nil || s.dir == "" || !safeIDRe.MatchString(burst) || !safeIDRe.MatchString(id) {
		return nil, os.ErrNotExist
	}
	b, err := os.ReadFile(filepath.Join(s.dir, burst, id+".json"))
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("report %s/%s: %w", burst, id, err)
	}
	return &r, nil
}

// Latest returns a burst's newest report, or nil.
func (s *Store) Latest(burst string) (*Report, error) {
	if s.dir == "" {
		return nil, nil
	}
	ids, err := s.ids(burst)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	return s.Load(ids[len(ids)-1])
}

// LatestFrom returns a burst's newest report that measured the given facts
// (engine, version and model), or nil: the baseline of an upgrade run.
func (s *Store) LatestFrom(burst string, f Facts) (*Report, error) {
	return s.latestWhere(burst, func(r *Report) bool { return FactsOf(r) == f && r.Shard == nil })
}

// LatestUpgrade returns a burst's newest upgrade run's report, or nil.
func (s *Store) LatestUpgrade(burst string) (*Report, error) {
	return s.latestWhere(burst, func(r *Report) bool { return r.Upgrade != nil })
}

// latestWhere returns a burst's newest report that ok accepts. It reads
// back at most the reports the store keeps of the burst; an unreadable one
// is passed over, and its error returned if none is accepted.
func (s *Store) latestWhere(burst string, ok func(*Report) bool) (*Report, error) {
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
		if ok(r) {
			return r, nil
		}
	}
	return nil, firstErr
}
