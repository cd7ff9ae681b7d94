package prompt

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"

	"github.com/llmprobe/llmprobe/config"
)

// jsonlFile is a kind of JSONL file read whole at load (a golden set, an
// audio dataset): its bounds, and what its errors call it and its items.
// A file past a bound is refused, not cut: a line dropped would silently
// change what is measured.
type jsonlFile struct {
	what      string // "a golden set"
	item      string // "golden line"
	fileBytes int64
	lineBytes int
	items     int
}

// maxFileErrors bounds the errors reported per file: the rest would bury
// them.
const maxFileErrors = 20

// read reads file, each line n that is not blank by parse, which returns
// the line's problems; it returns every problem of the file, each as
// "file:line: field: what", up to maxFileErrors of them.
func (j jsonlFile) read(file string, parse func(raw []byte, n int) []string) []string {
	f, err := openBounded(file, j.fileBytes, j.what, "; split it")
	if err != nil {
		return []string{err.Error()}
	}
	defer f.Close()
	sc := bufio.NewScanner(newLimitedReader(f, j.fileBytes))
	sc.Buffer(make([]byte, 0, 64<<10), j.lineBytes)
	var errs []string
	n, items := 0, 0
	for sc.Scan() && len(errs) < maxFileErrors {
		n++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		if n == 1 && raw[0] == '[' {
			return []string{fmt.Sprintf("%s:1: is a JSON array, not JSONL (one %s per line); convert it with jq -c '.[]'", file, j.item)}
		}
		if items == j.items {
			return append(errs, fmt.Sprintf("%s:%d: more than %d %ss; split the file", file, n, j.items, j.item))
		}
		problems := parse(raw, n)
		for _, p := range problems {
			errs = append(errs, fmt.Sprintf("%s:%d: %s", file, n, p))
		}
		if len(problems) == 0 {
			items++
		}
	}
	switch err := sc.Err(); {
	case len(errs) >= maxFileErrors:
		errs = append(errs[:maxFileErrors], fmt.Sprintf("%s: stopped after %d errors", file, maxFileErrors))
	case errors.Is(err, bufio.ErrTooLong):
		errs = append(errs, fmt.Sprintf("%s:%d: a line is longer than %s", file, n+1, config.Bytes(int64(j.lineBytes))))
	case err != nil:
		errs = append(errs, fmt.Sprintf("%s:%d: %v", file, n+1, err))
	case items == 0 && len(errs) == 0:
		errs = append(errs, fmt.Sprintf("%s holds no %s", file, j.item))
	}
	return errs
}
