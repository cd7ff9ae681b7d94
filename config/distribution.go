package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Distribution kinds for token lengths.
const (
	DistFixed     = "fixed"
	DistUniform   = "uniform"
	DistLognormal = "lognormal"
	DistEmpirical = "empirical"
)

// MaxTokens bounds every token length a scenario may ask for.
const MaxTokens = 1 << 20

const (
	lognormalMaxFactor = 10 // a lognormal without max stops at this many times its mean
	maxEmpiricalValues = 10_000
	maxPairErrors      = 5 // bad pairs named one by one before the rest are counted
)

// Distribution is a token-length distribution. A bare integer means fixed.
type Distribution struct {
	Kind  string  `yaml:"distribution,omitempty"`
	Value int     `yaml:"value,omitempty"`
	Min   int     `yaml:"min,omitempty"`
	Max   int     `yaml:"max,omitempty"`
	Mean  float64 `yaml:"mean,omitempty"`
	Sigma float64 `yaml:"sigma,omitempty"`
	// Values are an empirical distribution's [tokens, weight] pairs: a
	// length is drawn with probability weight / sum of weights.
	Values [][]float64 `yaml:"values,omitempty,flow"`
}

// UnmarshalYAML accepts a bare integer as a fixed length.
func (d *Distribution) UnmarshalYAML(unmarshal func(any) error) error {
	var n int
	if err := unmarshal(&n); err == nil {
		*d = Distribution{Kind: DistFixed, Value: n}
		return nil
	}
	type plain Distribution
	*d = Distribution{}
	return unmarshal((*plain)(d))
}

// Minimum is the smallest length the distribution yields.
func (d Distribution) Minimum() int {
	switch d.Kind {
	case DistUniform:
		return d.Min
	case DistLognormal:
		return max(d.Min, 1)
	case DistEmpirical:
		lo, _ := d.empiricalRange()
		return lo
	default:
		return d.Value
	}
}

// Maximum is the largest length the distribution yields.
func (d Distribution) Maximum() int {
	switch d.Kind {
	case DistUniform:
		return d.Max
	case DistLognormal:
		if d.Max > 0 {
			return d.Max
		}
		// Without max it stops at lognormalMaxFactor times its mean, so
		// no draw from its tail is unbounded.
		return int(min(math.Ceil(d.Mean*lognormalMaxFactor), MaxTokens))
	case DistEmpirical:
		_, hi := d.empiricalRange()
		return hi
	default:
		return d.Value
	}
}

// empiricalRange is the smallest and largest value of well-formed pairs
// (0, 0 without one); it is asked before validation has passed.
func (d Distribution) empiricalRange() (lo, hi int) {
	for _, p := range d.Values {
		if len(p) != 2 || !(p[0] >= 1 && p[0] <= MaxTokens) {
			continue
		}
		v := int(p[0])
		if hi == 0 || v < lo {
			lo = v
		}
		hi = max(hi, v)
	}
	return lo, hi
}

func (d *Distribution) validate(path string, errs *FieldErrors) {
	if d.Kind == "" {
		d.Kind = DistFixed
	}
	switch d.Kind {
	case DistFixed:
		errs.IntWithin(path+".value", d.Value, 1, MaxTokens, "tokens")
		if d.Min != 0 || d.Max != 0 || d.Mean != 0 || d.Sigma != 0 || d.Values != nil {
			errs.Add(path, "a fixed length takes only value")
		}
	case DistUniform:
		if d.Min < 1 || d.Max > MaxTokens || d.Max < d.Min {
			errs.Add(path, "uniform needs 1 <= min <= max <= %d tokens (got min %d, max %d)", MaxTokens, d.Min, d.Max)
		}
		if d.Value != 0 || d.Mean != 0 || d.Sigma != 0 || d.Values != nil {
			errs.Add(path, "a uniform length takes only min and max")
		}
	case DistLognormal:
		errs.Within(path+".mean", d.Mean, 1, MaxTokens, "tokens")
		errs.Above(path+".sigma", d.Sigma, 0, 4, "")
		if d.Min < 0 || (d.Max != 0 && d.Max < max(d.Min, 1)) || d.Max > MaxTokens {
			errs.Add(path, "lognormal clamps need 0 <= min <= max <= %d tokens (got min %d, max %d)", MaxTokens, d.Min, d.Max)
		}
		if d.Value != 0 || d.Values != nil {
			errs.Add(path, "a lognormal length takes mean, sigma, min and max, not value or values")
		}
	case DistEmpirical:
		d.validateEmpirical(path, errs)
	default:
		errs.Add(path+".distribution", "%q must be one of %s", d.Kind, strings.Join([]string{DistFixed, DistUniform, DistLognormal, DistEmpirical}, ", "))
	}
}

// validateEmpirical checks the [tokens, weight] pairs. A pasted histogram may
// be long and wrong throughout, so the first few bad pairs are named and the
// rest counted.
func (d *Distribution) validateEmpirical(path string, errs *FieldErrors) {
	if d.Value != 0 || d.Min != 0 || d.Max != 0 || d.Mean != 0 || d.Sigma != 0 {
		errs.Add(path, "an empirical length takes only values")
	}
	switch n := len(d.Values); {
	case n == 0:
		errs.Add(path+".values", "needs at least one [tokens, weight] pair, like [[64, 5], [256, 3]]")
		return
	case n > maxEmpiricalValues:
		errs.Add(path+".values", "has %d pairs; at most %d are allowed", n, maxEmpiricalValues)
		return
	}
	bad, sum := 0, 0.0
	for i, p := range d.Values {
		msg := ""
		switch {
		case len(p) != 2:
			msg = fmt.Sprintf("has %d numbers; each pair is [tokens, weight]", len(p))
		case !(p[0] >= 1 && p[0] <= MaxTokens) || p[0] != math.Trunc(p[0]):
			msg = fmt.Sprintf("tokens %s must be a whole number within [1, %d]", strconv.FormatFloat(p[0], 'f', -1, 64), MaxTokens)
		case !(p[1] > 0) || math.IsInf(p[1], 0):
			msg = fmt.Sprintf("weight %g must be a finite number above 0", p[1])
		default:
			sum += p[1]
			continue
		}
		if bad++; bad <= maxPairErrors {
			errs.Add(fmt.Sprintf("%s.values[%d]", path, i), "%s", msg)
		}
	}
	switch {
	case bad > maxPairErrors:
		errs.Add(path+".values", "and %d more bad pairs", bad-maxPairErrors)
	case bad == 0 && math.IsInf(sum, 0):
		errs.Add(path+".values", "the weights sum past the largest number; scale them down")
	}
}
