package config

import (
	"math"
	"time"

	"github.com/alecthomas/units"
)

// Limits bound what one burst may make llmprobe hold in memory; a burst whose
// plan goes past one is refused when the configuration loads (burst/plan
// checks them).
type Limits struct {
	// MaxPlannedRequests bounds one run of a burst, warmup and every sweep step included.
	MaxPlannedRequests int `yaml:"max_planned_requests,omitempty"`
	// MaxPromptTokens bounds the longest prompt any scenario may send.
	MaxPromptTokens int `yaml:"max_prompt_tokens,omitempty"`
	// MaxBurstMemory bounds a burst's worst-case memory (see plan.BurstFootprint).
	MaxBurstMemory units.Base2Bytes `yaml:"max_burst_memory,omitempty"`
	// MaxCanaryRate bounds the requests per second all canaries send together.
	MaxCanaryRate float64 `yaml:"max_canary_rate,omitempty"`
	// MaxCanaryMemory bounds what canary requests in flight may hold, each
	// target hanging to its timeout (see plan.CanaryFootprint).
	MaxCanaryMemory units.Base2Bytes `yaml:"max_canary_memory,omitempty"`
}

// DefaultLimits fit a burst beside the daemon in the 512 MiB the deploy files give it.
var DefaultLimits = Limits{
	MaxPlannedRequests: 200_000,
	MaxPromptTokens:    128 << 10,
	MaxBurstMemory:     256 * units.MiB,
	MaxCanaryRate:      100,
	MaxCanaryMemory:    256 * units.MiB,
}

// Hard ranges, for values and for the limits themselves.
const (
	MaxRate           = 100_000 // requests per second
	MaxPlannedCeiling = 10_000_000
	MaxSweepSteps     = 100

	maxTokens          = 1 << 20
	minRate            = 0.001
	maxConcurrency     = 10_000
	minBurstiness      = 0.01
	maxBurstiness      = 100
	lognormalMaxFactor = 10 // a lognormal without max stops at this many times its mean
	maxEmpiricalValues = 10_000
	maxPairErrors      = 5 // bad pairs named one by one before the rest are counted
)

// MaxInlineBody is the longest request body the prober sends as one buffer
// (a copy of the prompt) with its headers; a longer one is written from
// the prompt's pieces where they are, after the headers.
const MaxInlineBody = 16 << 10

func (l *Limits) validate(errs *errList) {
	errs.intWithin("limits.max_planned_requests", l.MaxPlannedRequests, 1, MaxPlannedCeiling, "requests")
	errs.intWithin("limits.max_prompt_tokens", l.MaxPromptTokens, 1, maxTokens, "tokens")
	if m := l.MaxBurstMemory; m < units.MiB || m > 64*units.GiB {
		errs.add("limits.max_burst_memory", "%s must be within [1MiB, 64GiB]", m)
	}
	errs.within("limits.max_canary_rate", l.MaxCanaryRate, 0.001, MaxRate, "requests per second")
	if m := l.MaxCanaryMemory; m < units.MiB || m > 64*units.GiB {
		errs.add("limits.max_canary_memory", "%s must be within [1MiB, 64GiB]", m)
	}
}

// within adds an error unless v is a finite number in [lo, hi].
func (l *errList) within(path string, v, lo, hi float64, unit string) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < lo || v > hi {
		l.add(path, "%g must be within [%g, %g]%s", v, lo, hi, unitSuffix(unit))
		return false
	}
	return true
}

// above adds an error unless v is a finite number in (lo, hi].
func (l *errList) above(path string, v, lo, hi float64, unit string) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) || v <= lo || v > hi {
		l.add(path, "%g must be within (%g, %g]%s", v, lo, hi, unitSuffix(unit))
		return false
	}
	return true
}

func (l *errList) intWithin(path string, v, lo, hi int, unit string) bool {
	if v < lo || v > hi {
		l.add(path, "%d must be within [%d, %d]%s", v, lo, hi, unitSuffix(unit))
		return false
	}
	return true
}

// durationWithin adds an error unless d is in [lo, hi]; a zero d passes when
// optional, meaning the field is unset.
func (l *errList) durationWithin(path string, d Duration, lo, hi time.Duration, optional bool) bool {
	if optional && d == 0 {
		return true
	}
	if d.Std() < lo || d.Std() > hi {
		l.add(path, "%s must be within [%s, %s]", d, Duration(lo), Duration(hi))
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
