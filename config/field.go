// What every part of the configuration is written and checked with: the errors
// that name each field at fault by its path, with the range checks that find
// them.

package config

import (
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/llmprobe/llmprobe/config/internal/yamlerr"
)

// FieldError is a problem with one field, located by its path (targets[1].url).
type FieldError struct {
	Path string
	Msg  string
	// First is where the value a duplicate repeats was first written.
	First string
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Msg }

// FieldErrors collects the problems of a configuration in the order they are found.
type FieldErrors []*FieldError

// Add appends a problem with the field at path.
func (l *FieldErrors) Add(path, format string, args ...any) {
	*l = append(*l, &FieldError{Path: path, Msg: fmt.Sprintf(format, args...)})
}

// Unknown adds the error of a reference to a kind ("target") by a name no
// such thing has, with the known name it is likely a typo of.
func (l *FieldErrors) Unknown(path, kind, name string, known []string) {
	msg := fmt.Sprintf("unknown %s %q", kind, name)
	if s := yamlerr.Suggest(name, known); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	l.Add(path, "%s", msg)
}

// Within adds an error unless v is a finite number in [lo, hi].
func (l *FieldErrors) Within(path string, v, lo, hi float64, unit string) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < lo || v > hi {
		l.Add(path, "%g must be within [%g, %g]%s", v, lo, hi, unitSuffix(unit))
		return false
	}
	return true
}

// Above adds an error unless v is a finite number in (lo, hi].
func (l *FieldErrors) Above(path string, v, lo, hi float64, unit string) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) || v <= lo || v > hi {
		l.Add(path, "%g must be within (%g, %g]%s", v, lo, hi, unitSuffix(unit))
		return false
	}
	return true
}

// IntWithin adds an error unless v is in [lo, hi].
func (l *FieldErrors) IntWithin(path string, v, lo, hi int, unit string) bool {
	if v < lo || v > hi {
		l.Add(path, "%d must be within [%d, %d]%s", v, lo, hi, unitSuffix(unit))
		return false
	}
	return true
}

// DurationWithin adds an error unless d is in [lo, hi]; a zero d passes when
// optional, meaning the field is unset.
func (l *FieldErrors) DurationWithin(path string, d Duration, lo, hi time.Duration, optional bool) bool {
	if optional && d == 0 {
		return true
	}
	if d.Std() < lo || d.Std() > hi {
		l.Add(path, "%s must be within [%s, %s]", d, Duration(lo), Duration(hi))
		return false
	}
	return true
}

func unitSuffix(unit string) string {
	if unit == "" {
		return ""
	}
	return " " + unit
}

// Names become label values, so they are kept to a safe alphabet.
var nameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,62}$`)

// Name checks the name of the kind of thing (target, scenario, burst)
// written at path: required, of the label alphabet, and not in seen, which
// maps each name to where it was first written and learns this one.
func (l *FieldErrors) Name(path, name, kind string, seen map[string]string) {
	switch {
	case name == "":
		l.Add(path+".name", "is required")
	case !nameRe.MatchString(name):
		l.Add(path+".name", "%q must be 1-63 letters, digits, '_', '.', ':' or '-', starting with a letter or digit", name)
	default:
		if first, dup := seen[name]; dup {
			*l = append(*l, &FieldError{Path: path + ".name", Msg: fmt.Sprintf("duplicate %s name %q", kind, name), First: first + ".name"})
			return
		}
		seen[name] = path
	}
}

// FileError drops Go's "open" or "stat" before the path of a file a field
// names: "open x: no such file" reads as code.
func FileError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}

// Bytes writes a size in KiB, MiB or GiB, one decimal.
func Bytes(b int64) string {
	switch {
	case b >= 1<<30:
		return strconv.FormatFloat(float64(b)/(1<<30), 'f', 1, 64) + " GiB"
	case b >= 1<<20:
		return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) + " MiB"
	default:
		return strconv.FormatFloat(float64(b)/(1<<10), 'f', 1, 64) + " KiB"
	}
}
