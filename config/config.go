// Package config is llmprobe's YAML configuration — targets, scenarios,
// canaries, bursts, comparisons and limits — with its decoding, defaults,
// validation (every error with its file, line, field and range) and
// equality; what it names is read when package plan compiles it.
package config

import (
	"fmt"
	"slices"
	"time"

	promconfig "github.com/prometheus/common/config"
)

// API selects the OpenAI-compatible endpoint a target is probed on.
type API string

const (
	APICompletions API = "completions"
	APIChat        API = "chat"
	APIResponses   API = "responses"
	APIEmbeddings  API = "embeddings"
	APIRerank      API = "rerank"
	// APIMessages is Anthropic's Messages API, which vLLM, SGLang and
	// llama.cpp serve too.
	APIMessages API = "messages"
)

// APIs is every API a target may name.
var APIs = []API{APIChat, APICompletions, APIResponses, APIMessages, APIEmbeddings, APIRerank, APITranscriptions}

// Config is the whole configuration file.
type Config struct {
	Targets   []Target   `yaml:"targets"`
	Scenarios []Scenario `yaml:"scenarios"`
	Canary    Canary     `yaml:"canary,omitempty"`
	Bursts    []Burst    `yaml:"bursts,omitempty"`
	Limits    Limits     `yaml:"limits,omitempty"`
	// Probe holds the settings /probe uses for a URL that is no configured
	// target (blackbox_exporter's module): everything of a target but its
	// name and URL.
	Probe *Target `yaml:"probe,omitempty"`
	// Comparisons pair a baseline with a candidate target continuously.
	Comparisons []Comparison `yaml:"comparisons,omitempty"`
	// Tracing, when set, exports a span per request to an OTLP collector.
	Tracing *Tracing `yaml:"tracing,omitempty"`
}

// Target is one OpenAI-compatible inference endpoint.
type Target struct {
	Name string `yaml:"name"`
	// URL is the server root (http://host:8000); a trailing /v1 is accepted.
	URL string `yaml:"url"`
	API API    `yaml:"api,omitempty"`
	// Model is the model to request; empty means the first id from /v1/models.
	Model   string   `yaml:"model,omitempty"`
	Timeout Duration `yaml:"timeout,omitempty"`
	// InfoInterval is how often /v1/models, /version and the Server header are read again.
	InfoInterval Duration `yaml:"info_interval,omitempty"`
	// ExtraBody is merged into every request body (ignore_eos, min_tokens, ...).
	ExtraBody map[string]any `yaml:"extra_body,omitempty"`
	// HTTPClientConfig holds TLS, auth, proxy and http_headers, whose
	// secrets and files never reach a host other than the target's own.
	HTTPClientConfig promconfig.HTTPClientConfig `yaml:"http_client_config,omitempty"`
	// EngineMetrics, when set, is read around bursts and beside canaries.
	EngineMetrics *EngineMetrics `yaml:"engine_metrics,omitempty"`
	// Autoscaling is the max rate under SLO an autoscaler reads.
	Autoscaling *Autoscaling `yaml:"autoscaling,omitempty"`
	// Replicas names the replica that answered each request, from a
	// response header a gateway sets.
	Replicas *Replicas `yaml:"replicas,omitempty"`
}

// Canary is the always-on low-rate probing schedule.
type Canary struct {
	Interval Duration `yaml:"interval,omitempty"`
	Jitter   Duration `yaml:"jitter,omitempty"`
	// Probes pairs targets with scenarios; empty means every scenario on every target.
	Probes []CanaryProbe `yaml:"probes,omitempty"`
}

// CanaryProbe selects targets and scenarios; an empty list means all of them.
type CanaryProbe struct {
	Targets   []string `yaml:"targets,omitempty"`
	Scenarios []string `yaml:"scenarios,omitempty"`
	Interval  Duration `yaml:"interval,omitempty"`
}

// Pair is one (target, scenario) canary schedule.
type Pair struct {
	Target   string
	Scenario string
	Interval time.Duration
}

// Defaults.
var (
	DefaultTarget = Target{
		API:              APIChat,
		Timeout:          Duration(60 * time.Second),
		InfoInterval:     Duration(5 * time.Minute),
		HTTPClientConfig: promconfig.DefaultHTTPClientConfig,
	}
	DefaultCanary = Canary{
		Interval: Duration(30 * time.Second),
	}
)

// UnmarshalYAML applies defaults. The func-style signature keeps the decoder's strict mode.
func (t *Target) UnmarshalYAML(unmarshal func(any) error) error {
	*t = DefaultTarget
	type plain Target
	return unmarshal((*plain)(t))
}

// Target returns the named target.
func (c *Config) Target(name string) (Target, bool) {
	i := slices.IndexFunc(c.Targets, func(t Target) bool { return t.Name == name })
	if i < 0 {
		return Target{}, false
	}
	return c.Targets[i], true
}

// names are the names of items, in order.
func names[T any](items []T, name func(T) string) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = name(it)
	}
	return out
}

// targetNames and scenarioNames are every target's and scenario's name.
func (c *Config) targetNames() []string {
	return names(c.Targets, func(t Target) string { return t.Name })
}
func (c *Config) scenarioNames() []string {
	return names(c.Scenarios, func(s Scenario) string { return s.Name })
}

// Scenario returns the named scenario.
func (c *Config) Scenario(name string) (Scenario, bool) {
	i := slices.IndexFunc(c.Scenarios, func(s Scenario) bool { return s.Name == name })
	if i < 0 {
		return Scenario{}, false
	}
	return c.Scenarios[i], true
}

// CanaryPairs expands the canary probes into one schedule per (target, scenario).
func (c *Config) CanaryPairs() []Pair {
	if len(c.Canary.Probes) == 0 {
		return c.probePairs(CanaryProbe{})
	}
	var pairs []Pair
	for _, p := range c.Canary.Probes {
		pairs = append(pairs, c.probePairs(p)...)
	}
	return pairs
}

// ProbeTarget is the target /probe measures at rawURL: the probe: block's
// settings (the defaults without one), named "probe".
func (c *Config) ProbeTarget(rawURL string) (Target, error) {
	if msg := urlProblem(rawURL); msg != "" {
		return Target{}, fmt.Errorf("target %s", msg)
	}
	t := DefaultTarget
	if c.Probe != nil {
		t = *c.Probe
	}
	t.Name, t.URL = "probe", rawURL
	return t, nil
}

func (c *Config) probePairs(p CanaryProbe) []Pair {
	interval := time.Duration(c.Canary.Interval)
	if p.Interval > 0 {
		interval = time.Duration(p.Interval)
	}
	var pairs []Pair
	for _, t := range c.Targets {
		if len(p.Targets) > 0 && !slices.Contains(p.Targets, t.Name) {
			continue
		}
		for _, s := range c.Scenarios {
			if len(p.Scenarios) > 0 && !slices.Contains(p.Scenarios, s.Name) {
				continue
			}
			pairs = append(pairs, Pair{Target: t.Name, Scenario: s.Name, Interval: interval})
		}
	}
	return pairs
}

// Thresholds returns every configured threshold of one objective, for histogram buckets.
func (c *Config) Thresholds(objective string) []float64 {
	var out []float64
	for _, s := range c.Scenarios {
		for _, o := range s.SLO.Objectives() {
			if o.Name == objective {
				out = append(out, o.Threshold.Seconds())
			}
		}
	}
	return out
}
