package config

import (
	"net/url"
	"strings"
	"time"
)

// Engine families whose /metrics names llmprobe knows (enginemetrics maps
// each to its series); auto takes the engine target_info detected.
const (
	EngineFamilyAuto     = "auto"
	EngineFamilyVLLM     = "vllm"
	EngineFamilySGLang   = "sglang"
	EngineFamilyTGI      = "tgi"
	EngineFamilyLlamaCPP = "llamacpp"
	EngineFamilyTRTLLM   = "trtllm"
)

// EngineFamilies lists what engine_metrics.family accepts.
var EngineFamilies = []string{EngineFamilyAuto, EngineFamilyVLLM, EngineFamilySGLang, EngineFamilyTGI, EngineFamilyLlamaCPP, EngineFamilyTRTLLM}

// EngineMetrics names a target's engine metrics endpoint, read before and
// after each burst and every Interval beside the canaries.
type EngineMetrics struct {
	// URL is the engine's Prometheus page; empty means the target's server
	// root with the family's usual path (enginemetrics.URL).
	URL      string   `yaml:"url,omitempty"`
	Family   string   `yaml:"family,omitempty"`
	Interval Duration `yaml:"interval,omitempty"`
	Timeout  Duration `yaml:"timeout,omitempty"`
}

// DefaultEngineMetrics fills what an engine_metrics block leaves out.
var DefaultEngineMetrics = EngineMetrics{
	Family:   EngineFamilyAuto,
	Interval: Duration(time.Minute),
	Timeout:  Duration(5 * time.Second),
}

// UnmarshalYAML applies defaults.
func (e *EngineMetrics) UnmarshalYAML(unmarshal func(any) error) error {
	*e = DefaultEngineMetrics
	type plain EngineMetrics
	return unmarshal((*plain)(e))
}

func (e *EngineMetrics) validate(path string, errs *FieldErrors) {
	if e.URL != "" {
		if msg := urlProblem(e.URL); msg != "" {
			errs.Add(path+".url", "%s", msg)
		} else if u, _ := url.Parse(e.URL); u.Path == "" || u.Path == "/" {
			errs.Add(path+".url", "%q names no path; the engine's page is usually /metrics", e.URL)
		}
	}
	known := false
	for _, f := range EngineFamilies {
		known = known || e.Family == f
	}
	if !known {
		errs.Add(path+".family", "%q must be one of %s", e.Family, strings.Join(EngineFamilies, ", "))
	}
	okInterval := errs.DurationWithin(path+".interval", e.Interval, 5*time.Second, 24*time.Hour, false)
	okTimeout := errs.DurationWithin(path+".timeout", e.Timeout, 100*time.Millisecond, time.Minute, false)
	if okInterval && okTimeout && e.Timeout >= e.Interval {
		errs.Add(path+".timeout", "%s must be less than the interval (%s)", e.Timeout, e.Interval)
	}
}
