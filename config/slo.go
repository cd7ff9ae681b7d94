package config

import (
	"regexp"
	"time"

	"github.com/llmprobe/llmprobe/lib/jsonschema"
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

// SLO holds a scenario's latency objectives; a zero threshold means no objective.
type SLO struct {
	TTFT        Duration `yaml:"ttft,omitempty"`
	TPOT        Duration `yaml:"tpot,omitempty"`
	E2E         Duration `yaml:"e2e,omitempty"`
	Stall       Duration `yaml:"stall,omitempty"`
	TargetRatio float64  `yaml:"target_ratio,omitempty"`
	TTFTAnswer  Duration `yaml:"ttft_answer,omitempty"`
	// QualityRatio is the share of checked answers (golden or quality) that
	// must pass their checks; 0 means no such objective.
	QualityRatio float64 `yaml:"quality_ratio,omitempty"`
}

// Objective is one configured latency objective.
type Objective struct {
	Name      string
	Threshold time.Duration
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

func (s SLO) validate(path string, errs *FieldErrors) {
	for _, o := range []struct {
		name string
		d    Duration
	}{{ObjectiveTTFT, s.TTFT}, {ObjectiveTPOT, s.TPOT}, {ObjectiveE2E, s.E2E}, {ObjectiveStall, s.Stall}, {ObjectiveTTFTAnswer, s.TTFTAnswer}} {
		errs.DurationWithin(path+"."+o.name, o.d, time.Millisecond, time.Hour, true)
	}
	if r := s.TargetRatio; !(r > 0 && r < 1) {
		errs.Add(path+".target_ratio", "%g must be within (0, 1), like 0.99", r)
	}
}

// Quality is an optional check on the answer text; every set check must pass.
type Quality struct {
	Contains string `yaml:"contains,omitempty"`
	Regex    string `yaml:"regex,omitempty"`
	JSON     bool   `yaml:"json,omitempty"`
	// Exact is the whole answer, leading and trailing space aside.
	Exact string `yaml:"exact,omitempty"`
	// JSONSchema is a JSON Schema (draft 2020-12 unless its $schema says
	// otherwise) the answer, parsed as JSON, must match.
	JSONSchema any `yaml:"json_schema,omitempty"`

	compiled *regexp.Regexp
	schema   *jsonschema.Schema
}

// Regexp returns the compiled regex check, or nil.
func (q *Quality) Regexp() *regexp.Regexp { return q.compiled }

// Schema returns the compiled json_schema check, or nil.
func (q *Quality) Schema() *jsonschema.Schema { return q.schema }

// Validate adds to errs what is wrong with q, written at path, and compiles
// its regex and schema.
func (q *Quality) Validate(path string, errs *FieldErrors) {
	if q.Contains == "" && q.Regex == "" && !q.JSON && q.Exact == "" && q.JSONSchema == nil {
		errs.Add(path, "sets no check: use contains, regex, exact, json or json_schema")
	}
	if q.Regex != "" {
		re, err := regexp.Compile(q.Regex)
		if err != nil {
			errs.Add(path+".regex", "%v", err)
		}
		q.compiled = re
	}
	q.schema = nil
	if q.JSONSchema != nil {
		s, err := jsonschema.Compile(q.JSONSchema)
		if err != nil {
			errs.Add(path+".json_schema", "%v", err)
		}
		q.schema = s
	}
}
