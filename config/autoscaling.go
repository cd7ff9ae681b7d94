package config

import "time"

// Autoscaling is what an autoscaler reads of a target: the highest rate one
// instance serves within its SLOs (llmprobe_target_max_rate_under_slo),
// from the newest sweep of a burst on the target or set here.
type Autoscaling struct {
	// MaxRateUnderSLO, requests per second, replaces what sweeps found:
	// for a target no burst sweeps, or a figure measured elsewhere.
	MaxRateUnderSLO float64 `yaml:"max_rate_under_slo,omitempty"`
	// MaxAge is how old a sweep may be and still set the figure; an
	// older one leaves it absent rather than stale.
	MaxAge Duration `yaml:"max_age,omitempty"`
}

// DefaultAutoscaling applies to a target without an autoscaling block and
// to the fields a block leaves out.
var DefaultAutoscaling = Autoscaling{MaxAge: Duration(7 * 24 * time.Hour)}

// UnmarshalYAML applies defaults.
func (a *Autoscaling) UnmarshalYAML(unmarshal func(any) error) error {
	*a = DefaultAutoscaling
	type plain Autoscaling
	return unmarshal((*plain)(a))
}

func (a *Autoscaling) validate(path string, errs *FieldErrors) {
	if a.MaxRateUnderSLO != 0 {
		errs.Within(path+".max_rate_under_slo", a.MaxRateUnderSLO, 0.001, 100000, "requests per second")
	}
	errs.DurationWithin(path+".max_age", a.MaxAge, time.Minute, 365*24*time.Hour, false)
}

// AutoscalingOf is the target's autoscaling block, or the defaults.
func (t *Target) AutoscalingOf() Autoscaling {
	if t.Autoscaling == nil {
		return DefaultAutoscaling
	}
	return *t.Autoscaling
}
