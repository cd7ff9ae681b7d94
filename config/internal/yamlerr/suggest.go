package yamlerr

import (
	"reflect"
	"regexp"
	"strings"
)

var indexRe = regexp.MustCompile(`\[\d+\]`)

// knownFields lists the YAML keys the mapping at path accepts, following
// yaml tags from schema (inline structs included); nil where path is not a
// struct, like a map of headers.
func knownFields(schema reflect.Type, path string) []string {
	t := schema
	if path != "" {
		for _, key := range strings.Split(indexRe.ReplaceAllString(path, ""), ".") {
			f, ok := fieldByKey(t, key)
			if !ok {
				return nil
			}
			t = f
		}
	}
	t = elem(t)
	if t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	collectKeys(t, &out)
	return out
}

// elem unwraps pointers and slices down to what one YAML item decodes into.
func elem(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	return t
}

func yamlKey(f reflect.StructField) (key string, inline bool) {
	tag := f.Tag.Get("yaml")
	name, opts, _ := strings.Cut(tag, ",")
	if strings.Contains(opts, "inline") {
		return "", true
	}
	if name == "" {
		name = strings.ToLower(f.Name)
	}
	return name, false
}

func collectKeys(t reflect.Type, out *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Tag.Get("yaml") == "-" {
			continue
		}
		if key, inline := yamlKey(f); inline {
			if it := elem(f.Type); it.Kind() == reflect.Struct {
				collectKeys(it, out)
			}
		} else {
			*out = append(*out, key)
		}
	}
}

func fieldByKey(t reflect.Type, key string) (reflect.Type, bool) {
	t = elem(t)
	if t.Kind() != reflect.Struct {
		return nil, false
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		k, inline := yamlKey(f)
		if inline {
			if ft, ok := fieldByKey(f.Type, key); ok {
				return ft, true
			}
		} else if k == key {
			return f.Type, true
		}
	}
	return nil, false
}

// Suggest returns the known key closest to an unknown one, if a typo away.
func Suggest(unknown string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		limit := min(2, max(1, len(k)/3))
		if d := levenshtein(unknown, k); d <= limit && d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// levenshtein is the edit distance of a and b, a swap of two neighbouring
// characters one edit (optimal string alignment): "chta" is one from "chat".
func levenshtein(a, b string) int {
	before := make([]int, len(b)+1) // the row two above, for swaps
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], before[j-2]+1)
			}
		}
		before, prev, cur = prev, cur, before
	}
	return prev[len(b)]
}
