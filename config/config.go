// Package config defines llmprobe's YAML configuration: its types, defaults, validation and safe reload.
package config

import (
	"fmt"
	"regexp"
	"slices"
	"time"

	promconfig "github.com/prometheus/common/config"
)

// API selects the OpenAI-compatible endpoint a target is probed on.
type API string

const (
	APICompletions API = "completions"
	APIChat        API = "chat"
)

// Objective names, used as the `objective` label.
const (
	ObjectiveTTFT  = "ttft"
	ObjectiveTPOT  = "tpot"
	ObjectiveE2E   = "e2e"
	ObjectiveStall = "stall"
	// ObjectiveTTFTAnswer is the time to the first answer token, after a
	// reasoning model's reasoning (the TTFT of a request without reasoning).
	ObjectiveTTFTAnswer = "ttft_answer"
)

// Distribution kinds for token lengths.
const (
	DistFixed     = "fixed"
	DistUniform   = "uniform"
	DistLognormal = "lognormal"
	DistEmpirical = "empirical"
)

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
}

// Scenario describes one kind of request and the objectives it is judged by.
type Scenario struct {
	Name string `yaml:"name"`
	// Prompt, when set, is sent as is (after the nonce) instead of a synthetic prompt.
	Prompt string `yaml:"prompt,omitempty"`
	// PromptDataset, when set, draws each prompt (after the nonce) from a
	// file of real conversations instead.
	PromptDataset      *PromptDataset `yaml:"prompt_dataset,omitempty"`
	PromptTokens       Distribution   `yaml:"prompt_tokens,omitempty"`
	OutputTokens       Distribution   `yaml:"output_tokens,omitempty"`
	SharedPrefixTokens int            `yaml:"shared_prefix_tokens,omitempty"`
	Sampling           Sampling       `yaml:"sampling,omitempty"`
	SLO                SLO            `yaml:"slo,omitempty"`
	Quality            *Quality       `yaml:"quality,omitempty"`
	// Conversation, when set, makes each arrival a multi-turn session.
	Conversation *Conversation `yaml:"conversation,omitempty"`
}

// DatasetShareGPT is the one dataset format: JSONL of ShareGPT conversations.
const DatasetShareGPT = "sharegpt"

// PromptDataset draws a scenario's prompts from a file of real conversations.
type PromptDataset struct {
	// File is read at load (by prompt's check); a relative path is
	// relative to the configuration file.
	File   string `yaml:"file"`
	Format string `yaml:"format,omitempty"`
	// Prompts are the file's first human turns, one per conversation. They
	// are compared by Equal, so a reload sees a changed file.
	Prompts []DatasetPrompt `yaml:"-"`
}

// DatasetPrompt is one prompt from a dataset.
type DatasetPrompt struct {
	Text string
	Line int // in the file
	// Tokens is an estimate (prompt.EstimateTokens); the server's usage counts them.
	Tokens int
}

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

// Sampling holds request sampling parameters; unset fields are not sent.
type Sampling struct {
	Temperature *float64 `yaml:"temperature,omitempty"`
	TopP        *float64 `yaml:"top_p,omitempty"`
	Seed        *int64   `yaml:"seed,omitempty"`
}

// SLO holds a scenario's latency objectives; a zero threshold means no objective.
type SLO struct {
	TTFT        Duration `yaml:"ttft,omitempty"`
	TPOT        Duration `yaml:"tpot,omitempty"`
	E2E         Duration `yaml:"e2e,omitempty"`
	Stall       Duration `yaml:"stall,omitempty"`
	TargetRatio float64  `yaml:"target_ratio,omitempty"`
	TTFTAnswer  Duration `yaml:"ttft_answer,omitempty"`
}

// Objective is one configured latency objective.
type Objective struct {
	Name      string
	Threshold time.Duration
}

// Quality is an optional check on the answer text; every set check must pass.
type Quality struct {
	Contains string `yaml:"contains,omitempty"`
	Regex    string `yaml:"regex,omitempty"`
	JSON     bool   `yaml:"json,omitempty"`

	compiled *regexp.Regexp
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
	DefaultScenario = Scenario{
		PromptTokens: Distribution{Kind: DistFixed, Value: 128},
		OutputTokens: Distribution{Kind: DistFixed, Value: 64},
		SLO:          SLO{TargetRatio: 0.99},
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

// UnmarshalYAML applies defaults.
func (s *Scenario) UnmarshalYAML(unmarshal func(any) error) error {
	*s = DefaultScenario
	type plain Scenario
	return unmarshal((*plain)(s))
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

// Objectives returns the configured objectives in a fixed order.
func (s SLO) Objectives() []Objective {
	var out []Objective
	for _, o := range []Objective{
		{ObjectiveTTFT, time.Duration(s.TTFT)},
		{ObjectiveTPOT, time.Duration(s.TPOT)},
		{ObjectiveE2E, time.Duration(s.E2E)},
		{ObjectiveStall, time.Duration(s.Stall)},
		{ObjectiveTTFTAnswer, time.Duration(s.TTFTAnswer)},
	} {
		if o.Threshold > 0 {
			out = append(out, o)
		}
	}
	return out
}

// Regexp returns the compiled regex check, or nil.
func (q *Quality) Regexp() *regexp.Regexp { return q.compiled }

// Target returns the named target.
func (c *Config) Target(name string) (Target, bool) {
	i := slices.IndexFunc(c.Targets, func(t Target) bool { return t.Name == name })
	if i < 0 {
		return Target{}, false
	}
	return c.Targets[i], true
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
