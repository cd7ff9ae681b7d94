package config

import (
	"fmt"
	"math"
)

// JSONProblem finds the first part of a decoded YAML value that JSON cannot
// hold: a mapping key that is not a string, or a number that is not finite.
func JSONProblem(v any) (path, msg string) {
	switch v := v.(type) {
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "", fmt.Sprintf("%g is not a JSON number", v)
		}
	case map[string]any:
		for k, x := range v {
			if p, m := JSONProblem(x); m != "" {
				return "." + k + p, m
			}
		}
	case map[any]any:
		for k := range v {
			return "", fmt.Sprintf("key %v is not a string", k)
		}
	case []any:
		for i, x := range v {
			if p, m := JSONProblem(x); m != "" {
				return fmt.Sprintf("[%d]%s", i, p), m
			}
		}
	}
	return "", ""
}
