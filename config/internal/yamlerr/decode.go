package yamlerr

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Decode decodes data strictly into a fresh value of fresh. Where there
// are problems of types (unknown keys, values of the wrong kind), it
// decodes again leniently, so that the rest of the file can be validated
// too and one run shows every error: a strict decoder drops a list item
// that has an unknown key, which would hide the item's errors and renumber
// the paths of the items after it; a value of the wrong kind is left zero,
// and its field's own checks must yield to its problem (Covered). An error
// that is not about types comes back as err.
func Decode[T any](data []byte, idx *Index, fresh func() *T, moved map[string]string) (*T, []Problem, error) {
	v, err := decodeAs(data, fresh(), true)
	var te *yaml.TypeError
	if err == nil || !errors.As(err, &te) {
		return v, nil, err
	}
	problems := idx.TypeErrors(te, reflect.TypeFor[T](), moved)
	v = fresh()
	if err := idx.without(problems).Decode(v); err != nil && !errors.As(err, &te) {
		return nil, nil, err
	}
	return v, problems, nil
}

func decodeAs[T any](data []byte, v *T, strict bool) (*T, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(strict)
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return v, nil
}

// Covered reports whether a problem already speaks for the field at path:
// an unknown key that is a typo of it, or of one it lies in (its "did you
// mean" says the rest), or a value of the wrong kind at it or above it
// (decoded as zero, it would fail its own checks as well).
func Covered(problems []Problem, path string) bool {
	under := func(p string) bool {
		return p != "" && (path == p || strings.HasPrefix(path, p+".") || strings.HasPrefix(path, p+"["))
	}
	for _, p := range problems {
		if under(p.Meant) || !p.Unknown && (under(p.Path) || under(p.Dropped)) {
			return true
		}
	}
	return false
}
