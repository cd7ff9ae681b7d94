package yamlerr

import (
	"errors"
	"fmt"
	"sort"
)

// Problem is one error of a file, at Line (0: of the file as a whole) and
// in the field at Path ("" where none).
type Problem struct {
	Line int
	Path string
	Msg  string
	// Unknown marks a key the schema does not have; Meant is the path of
	// the field it is a typo of, where it is one.
	Unknown bool
	Meant   string
	// Dropped is the field left out of decoding for this problem: the
	// problem's own, or the list it is an element of.
	Dropped string
}

// UnknownOnly reports whether every problem is an unknown key: the decoder
// skipped those keys and decoded the rest, which can then be validated.
func UnknownOnly(ps []Problem) bool {
	for _, p := range ps {
		if !p.Unknown {
			return false
		}
	}
	return true
}

// Join makes one error of a file's problems, "file:line: path: message"
// each, in the order of their lines (problems of one line as found).
func Join(filename string, ps []Problem) error {
	ps = append([]Problem(nil), ps...)
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Line < ps[j].Line })
	errs := make([]error, len(ps))
	for i, p := range ps {
		at := filename
		if p.Line > 0 {
			at = fmt.Sprintf("%s:%d", filename, p.Line)
		}
		if p.Path != "" {
			errs[i] = fmt.Errorf("%s: %s: %s", at, p.Path, p.Msg)
		} else {
			errs[i] = fmt.Errorf("%s: %s", at, p.Msg)
		}
	}
	return errors.Join(errs...)
}
