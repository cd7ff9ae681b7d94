package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/llmprobe/llmprobe/report"
)

// Read reads the report file at path, as the store, `llmprobe gate
// --output` and `llmprobe report merge` write it, and says plainly what is
// wrong with one that is not a report: it must exist, be a report's JSON,
// and name its report and burst. A missing file's error is fs.ErrNotExist.
func Read(path string) (*report.Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, missing(path)
		}
		return nil, err
	}
	var r report.Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s is not a burst report: %w", path, err)
	}
	if r.ID == "" || r.Burst == "" {
		return nil, fmt.Errorf("%s is not a burst report: it has no \"id\" or no \"burst\"", path)
	}
	return &r, nil
}

// missing is a report file that does not exist; it says what to give
// instead.
type missing string

func (m missing) Error() string {
	return string(m) + " does not exist; give a report file, as `llmprobe gate --output` writes it or one under the storage path (data/<burst>/<id>.json)"
}

func (missing) Is(target error) bool { return target == fs.ErrNotExist }
