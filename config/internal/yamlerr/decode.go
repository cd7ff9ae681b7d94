package yamlerr

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Decode decodes data strictly into a fresh value of fresh. Where the only
// problems are unknown keys, it decodes again leniently, so that the rest
// of the file can be validated too and one run shows every error: a strict
// decoder drops a list item that has an unknown key, which would hide the
// item's errors and renumber the paths of the items after it. An error that
// is not about types comes back as err; problems other than unknown keys
// come back without a value.
func Decode[T any](data []byte, idx *Index, fresh func() *T, moved map[string]string) (*T, []Problem, error) {
	v, err := decodeAs(data, fresh(), true)
	var te *yaml.TypeError
	if err == nil || !errors.As(err, &te) {
		return v, nil, err
	}
	problems := idx.TypeErrors(te, reflect.TypeFor[T](), moved)
	if !UnknownOnly(problems) {
		return nil, problems, nil
	}
	if v, err = decodeAs(data, fresh(), false); err != nil {
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

// Meant reports whether an unknown key of problems is a typo of the field
// at path, or of one it lies in: its "did you mean" says the rest.
func Meant(problems []Problem, path string) bool {
	for _, p := range problems {
		if p.Meant != "" && (path == p.Meant || strings.HasPrefix(path, p.Meant+".") || strings.HasPrefix(path, p.Meant+"[")) {
			return true
		}
	}
	return false
}
