// Package jsongen draws seeded JSON values from a JSON Schema's common
// keywords (type, properties, required, enum, const, items, minItems,
// maxItems, minimum, maximum, minLength, maxLength, the first of anyOf or
// oneOf) and values that break one of them; nothing else is honoured.
package jsongen

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

var words = strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliett kilo lima mike november oscar papa")

// Instance is a value schema (decoded from JSON) accepts, as far as the
// keywords this package knows go: a pattern, a format or a $ref is not
// honoured. A false schema accepts nothing: its instance is nil.
func Instance(schema any, rng *rand.Rand) any {
	s, ok := schema.(map[string]any)
	if !ok {
		if schema == true {
			return words[rng.IntN(len(words))]
		}
		return nil
	}
	if c, ok := s["const"]; ok {
		return c
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[rng.IntN(len(e))]
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			return Instance(alts[0], rng)
		}
	}
	switch typeOf(s) {
	case "object":
		return object(s, rng)
	case "array":
		n := int(number(s, "minItems", 0))
		if n < 1 {
			n = min(2, int(number(s, "maxItems", 2)))
		}
		out := make([]any, n)
		for i := range out {
			out[i] = Instance(orTrue(s["items"]), rng)
		}
		return out
	case "integer":
		lo, hi := bounds(s)
		lo, hi = math.Ceil(lo), math.Floor(hi)
		return lo + float64(rng.IntN(int(max(hi-lo, 0))+1))
	case "number":
		lo, hi := bounds(s)
		return lo + math.Round((hi-lo)*rng.Float64()*100)/100
	case "boolean":
		return rng.IntN(2) == 1
	case "null":
		return nil
	}
	return text(s, rng)
}

// typeOf is the schema's type (the first of a list that is not null), or
// what its keywords imply.
func typeOf(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if x, ok := x.(string); ok && x != "null" {
				return x
			}
		}
		return "null"
	}
	switch {
	case s["properties"] != nil || s["required"] != nil:
		return "object"
	case s["items"] != nil:
		return "array"
	}
	return "string"
}

// object has every property the schema names, in order of name, and every
// required one.
func object(s map[string]any, rng *rand.Rand) map[string]any {
	props, _ := s["properties"].(map[string]any)
	out := make(map[string]any, len(props))
	for _, k := range sortedKeys(props) {
		out[k] = Instance(props[k], rng)
	}
	for _, r := range required(s) {
		if _, ok := out[r]; !ok {
			out[r] = Instance(true, rng)
		}
	}
	return out
}

func text(s map[string]any, rng *rand.Rand) string {
	w := words[rng.IntN(len(words))]
	lo, hi := int(number(s, "minLength", 0)), int(number(s, "maxLength", math.MaxInt32))
	for len(w) < lo {
		w += "x"
	}
	if len(w) > hi {
		w = w[:hi]
	}
	return w
}

// bounds is a number's range from minimum, maximum and their exclusive
// forms; 0 to 100 where the schema sets none.
func bounds(s map[string]any) (lo, hi float64) {
	lo, hi = number(s, "minimum", math.Inf(-1)), number(s, "maximum", math.Inf(1))
	if x := number(s, "exclusiveMinimum", math.Inf(-1)); x >= lo {
		lo = x + 1
	}
	if x := number(s, "exclusiveMaximum", math.Inf(1)); x <= hi {
		hi = x - 1
	}
	switch {
	case math.IsInf(lo, -1) && math.IsInf(hi, 1):
		lo, hi = 0, 100
	case math.IsInf(lo, -1):
		lo = hi - 100
	case math.IsInf(hi, 1):
		hi = lo + 100
	}
	return lo, max(lo, hi)
}

func number(s map[string]any, key string, otherwise float64) float64 {
	if v, ok := s[key].(float64); ok {
		return v
	}
	return otherwise
}

func required(s map[string]any) []string {
	var out []string
	list, _ := s["required"].([]any)
	for _, r := range list {
		if r, ok := r.(string); ok {
			out = append(out, r)
		}
	}
	return out
}

func orTrue(s any) any {
	if s == nil {
		return true
	}
	return s
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Violation is a value that schema refuses, made as simply as it can be:
// an object valid but for its first required (else first) property that
// has a type, enum or const, which gets a value its own schema refuses, or
// without its first required property; a value out of an enum, not a
// const, or of another type than the schema asks for. A schema without
// such keywords refuses nothing this package can make: nil.
func Violation(schema any, rng *rand.Rand) any {
	s, _ := schema.(map[string]any)
	switch {
	case s["const"] != nil:
		return map[string]any{"not": s["const"]}
	case s["enum"] != nil:
		return "none of these"
	case typeOf(s) == "object":
		v := object(s, rng)
		props, _ := s["properties"].(map[string]any)
		for _, k := range append(required(s), sortedKeys(props)...) {
			if constrains(props[k]) {
				v[k] = Violation(props[k], rng)
				return v
			}
		}
		if r := required(s); len(r) > 0 {
			delete(v, r[0])
			return v
		}
	case !constrains(s):
		return nil
	case typeOf(s) == "string":
		return 12345.0
	}
	return "not of type " + typeOf(s)
}

// constrains reports whether schema says what its value must be: a type,
// an enum or a const.
func constrains(schema any) bool {
	s, ok := schema.(map[string]any)
	return ok && (s["type"] != nil || s["enum"] != nil || s["const"] != nil)
}
