package config

import (
	"github.com/alecthomas/units"
)

// Limits bound what one burst may make llmprobe hold in memory; a burst whose
// plan goes past one is refused when the configuration loads (plan
// checks them).
type Limits struct {
	// MaxPlannedRequests bounds one run of a burst, warmup and every sweep step included.
	MaxPlannedRequests int `yaml:"max_planned_requests,omitempty"`
	// MaxPromptTokens bounds the longest prompt any scenario may send.
	MaxPromptTokens int `yaml:"max_prompt_tokens,omitempty"`
	// MaxBurstMemory bounds a burst's worst-case memory (see plan.Burst.Footprint).
	MaxBurstMemory units.Base2Bytes `yaml:"max_burst_memory,omitempty"`
	// MaxCanaryRate bounds the requests per second all canaries send together.
	MaxCanaryRate float64 `yaml:"max_canary_rate,omitempty"`
	// MaxCanaryMemory bounds what canary requests in flight may hold, each
	// target hanging to its timeout (see plan.Plan.CanaryFootprint).
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

	minRate        = 0.001
	maxConcurrency = 10_000
	minBurstiness  = 0.01
	maxBurstiness  = 100
)

// MaxInlineBody is the longest request body the prober sends as one buffer
// (a copy of the prompt) with its headers; a longer one is written from
// the prompt's pieces where they are, after the headers.
const MaxInlineBody = 16 << 10

func (l *Limits) validate(errs *FieldErrors) {
	errs.IntWithin("limits.max_planned_requests", l.MaxPlannedRequests, 1, MaxPlannedCeiling, "requests")
	errs.IntWithin("limits.max_prompt_tokens", l.MaxPromptTokens, 1, MaxTokens, "tokens")
	if m := l.MaxBurstMemory; m < units.MiB || m > 64*units.GiB {
		errs.Add("limits.max_burst_memory", "%s must be within [1MiB, 64GiB]", m)
	}
	errs.Within("limits.max_canary_rate", l.MaxCanaryRate, 0.001, MaxRate, "requests per second")
	if m := l.MaxCanaryMemory; m < units.MiB || m > 64*units.GiB {
		errs.Add("limits.max_canary_memory", "%s must be within [1MiB, 64GiB]", m)
	}
}
