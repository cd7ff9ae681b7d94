package config

import (
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/config/field"
)

// Request fields the prober owns; extra_body must not override them.
var reservedBodyKeys = []string{"model", "prompt", "messages", "stream", "max_tokens", "max_completion_tokens"}

func (c *Config) validate() field.Errors {
	var errs field.Errors
	if len(c.Targets) == 0 {
		errs.Add("targets", "at least one target is required")
	}
	seen := map[string]string{}
	for i := range c.Targets {
		c.Targets[i].validate(fmt.Sprintf("targets[%d]", i), seen, &errs)
	}
	if len(c.Scenarios) == 0 {
		errs.Add("scenarios", "at least one scenario is required")
	}
	seen = map[string]string{}
	for i := range c.Scenarios {
		c.Scenarios[i].validate(fmt.Sprintf("scenarios[%d]", i), seen, &errs)
	}
	c.Canary.validate(c, &errs)
	seen = map[string]string{}
	for i := range c.Bursts {
		c.Bursts[i].validate(fmt.Sprintf("bursts[%d]", i), c, seen, &errs)
	}
	c.Limits.validate(&errs)
	if c.Probe != nil {
		c.Probe.validateTemplate(&errs)
	}

	return errs
}

func (t *Target) validate(path string, seen map[string]string, errs *field.Errors) {
	errs.Name(path, t.Name, "target", seen)
	if t.URL == "" {
		errs.Add(path+".url", "is required")
	} else if msg := urlProblem(t.URL); msg != "" {
		errs.Add(path+".url", "%s", msg)
	}
	t.validateSettings(path, errs)
}

// urlProblem says what makes raw unfit as a target's URL, or "".
func urlProblem(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Sprintf("%q must be an absolute http or https URL like http://host:8000", raw)
	case u.User != nil:
		return "must not carry credentials; use http_client_config.basic_auth or authorization"
	case u.RawQuery != "" || u.Fragment != "":
		return "must not have a query or fragment"
	}
	return ""
}

// validateTemplate checks the probe: block, whose name and URL come from
// each /probe request.
func (t *Target) validateTemplate(errs *field.Errors) {
	if t.Name != "" {
		errs.Add("probe.name", "cannot be set: /probe results carry no target name")
	}
	if t.URL != "" {
		errs.Add("probe.url", "cannot be set: the URL is /probe's target parameter")
	}
	if t.EngineMetrics != nil {
		errs.Add("probe.engine_metrics", "cannot be set: /probe measures one request, with no engine metrics around it")
	}
	t.validateSettings("probe", errs)
}

// validateSettings checks everything of a target but its name and URL.
func (t *Target) validateSettings(path string, errs *field.Errors) {
	if t.API != APIChat && t.API != APICompletions {
		errs.Add(path+".api", "%q must be %q or %q", t.API, APIChat, APICompletions)
	}
	errs.DurationWithin(path+".timeout", t.Timeout, 100*time.Millisecond, time.Hour, false)
	errs.DurationWithin(path+".info_interval", t.InfoInterval, time.Second, 24*time.Hour, false)
	for _, k := range reservedBodyKeys {
		if _, ok := t.ExtraBody[k]; ok {
			errs.Add(path+".extra_body."+k, "%q is set by the prober from the scenario and cannot be overridden", k)
		}
	}
	for k, v := range t.ExtraBody {
		if sub, msg := jsonProblem(v); msg != "" {
			errs.Add(path+".extra_body."+k+sub, "%s; extra_body must encode to JSON", msg)
		}
	}
	if err := t.HTTPClientConfig.Validate(); err != nil {
		errs.Add(path+".http_client_config", "%v", err)
	}
	if t.EngineMetrics != nil {
		t.EngineMetrics.validate(path+".engine_metrics", errs)
	}
}

func (s *Scenario) validate(path string, seen map[string]string, errs *field.Errors) {
	errs.Name(path, s.Name, "scenario", seen)
	if d := s.PromptDataset; d != nil {
		if s.Prompt != "" {
			errs.Add(path+".prompt_dataset", "cannot be used with a literal prompt")
		}
		if s.SharedPrefixTokens > 0 {
			errs.Add(path+".shared_prefix_tokens", "cannot be used with prompt_dataset")
		}
		d.validate(path+".prompt_dataset", errs)
	} else if s.Prompt != "" {
		if s.SharedPrefixTokens > 0 {
			errs.Add(path+".shared_prefix_tokens", "cannot be used with a literal prompt")
		}
		if len(s.Prompt) > 4<<20 {
			errs.Add(path+".prompt", "%d bytes must be at most 4 MiB", len(s.Prompt))
		}
	} else {
		s.PromptTokens.validate(path+".prompt_tokens", errs)
		if s.SharedPrefixTokens < 0 {
			errs.Add(path+".shared_prefix_tokens", "%d must not be negative", s.SharedPrefixTokens)
		} else if s.SharedPrefixTokens > 0 && s.SharedPrefixTokens >= s.PromptTokens.Minimum() {
			errs.Add(path+".shared_prefix_tokens", "%d must be less than the smallest prompt length (%d)", s.SharedPrefixTokens, s.PromptTokens.Minimum())
		}
	}
	s.OutputTokens.validate(path+".output_tokens", errs)
	if c := s.Conversation; c != nil {
		c.validate(path+".conversation", s, errs)
	}
	if t := s.Sampling.Temperature; t != nil {
		errs.Within(path+".sampling.temperature", *t, 0, 2, "")
	}
	if p := s.Sampling.TopP; p != nil {
		errs.Above(path+".sampling.top_p", *p, 0, 1, "")
	}
	for _, o := range []struct {
		name string
		d    Duration
	}{{ObjectiveTTFT, s.SLO.TTFT}, {ObjectiveTPOT, s.SLO.TPOT}, {ObjectiveE2E, s.SLO.E2E}, {ObjectiveStall, s.SLO.Stall}, {ObjectiveTTFTAnswer, s.SLO.TTFTAnswer}} {
		errs.DurationWithin(path+".slo."+o.name, o.d, time.Millisecond, time.Hour, true)
	}
	if r := s.SLO.TargetRatio; !(r > 0 && r < 1) {
		errs.Add(path+".slo.target_ratio", "%g must be within (0, 1), like 0.99", r)
	}
	if q := s.Quality; q != nil {
		if q.Contains == "" && q.Regex == "" && !q.JSON {
			errs.Add(path+".quality", "sets no check: use contains, regex or json")
		}
		if q.Regex != "" {
			re, err := regexp.Compile(q.Regex)
			if err != nil {
				errs.Add(path+".quality.regex", "%v", err)
			}
			q.compiled = re
		}
	}
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
		return int(min(math.Ceil(d.Mean*lognormalMaxFactor), maxTokens))
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
		if len(p) != 2 || !(p[0] >= 1 && p[0] <= maxTokens) {
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

func (d *Distribution) validate(path string, errs *field.Errors) {
	if d.Kind == "" {
		d.Kind = DistFixed
	}
	switch d.Kind {
	case DistFixed:
		errs.IntWithin(path+".value", d.Value, 1, maxTokens, "tokens")
		if d.Min != 0 || d.Max != 0 || d.Mean != 0 || d.Sigma != 0 || d.Values != nil {
			errs.Add(path, "a fixed length takes only value")
		}
	case DistUniform:
		if d.Min < 1 || d.Max > maxTokens || d.Max < d.Min {
			errs.Add(path, "uniform needs 1 <= min <= max <= %d tokens (got min %d, max %d)", maxTokens, d.Min, d.Max)
		}
		if d.Value != 0 || d.Mean != 0 || d.Sigma != 0 || d.Values != nil {
			errs.Add(path, "a uniform length takes only min and max")
		}
	case DistLognormal:
		errs.Within(path+".mean", d.Mean, 1, maxTokens, "tokens")
		errs.Above(path+".sigma", d.Sigma, 0, 4, "")
		if d.Min < 0 || (d.Max != 0 && d.Max < max(d.Min, 1)) || d.Max > maxTokens {
			errs.Add(path, "lognormal clamps need 0 <= min <= max <= %d tokens (got min %d, max %d)", maxTokens, d.Min, d.Max)
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
func (d *Distribution) validateEmpirical(path string, errs *field.Errors) {
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
		case !(p[0] >= 1 && p[0] <= maxTokens) || p[0] != math.Trunc(p[0]):
			msg = fmt.Sprintf("tokens %s must be a whole number within [1, %d]", strconv.FormatFloat(p[0], 'f', -1, 64), maxTokens)
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

func (d *PromptDataset) validate(path string, errs *field.Errors) {
	if d.Format == "" {
		d.Format = DatasetShareGPT
	}
	if d.Format != DatasetShareGPT {
		errs.Add(path+".format", "%q must be %q", d.Format, DatasetShareGPT)
	}
	if d.File == "" {
		errs.Add(path+".file", "is required")
	}
}

func (c *Canary) validate(cfg *Config, errs *field.Errors) {
	errs.DurationWithin("canary.interval", c.Interval, 100*time.Millisecond, 24*time.Hour, false)
	if c.Jitter < 0 || c.Jitter >= c.Interval {
		errs.Add("canary.jitter", "%s must be at least 0s and less than the interval (%s)", c.Jitter, c.Interval)
	}
	pairs := map[[2]string]string{}
	for i, p := range c.Probes {
		path := fmt.Sprintf("canary.probes[%d]", i)
		for j, t := range p.Targets {
			if _, ok := cfg.Target(t); !ok {
				errs.Add(fmt.Sprintf("%s.targets[%d]", path, j), "unknown target %q", t)
			}
		}
		for j, s := range p.Scenarios {
			if _, ok := cfg.Scenario(s); !ok {
				errs.Add(fmt.Sprintf("%s.scenarios[%d]", path, j), "unknown scenario %q", s)
			}
		}
		errs.DurationWithin(path+".interval", p.Interval, 100*time.Millisecond, 24*time.Hour, true)
		if p.Interval != 0 && c.Jitter >= p.Interval {
			errs.Add(path+".interval", "must be greater than canary.jitter")
		}
		for _, pair := range cfg.probePairs(p) {
			key := [2]string{pair.Target, pair.Scenario}
			if prev, dup := pairs[key]; dup {
				errs.Add(path, "target %q with scenario %q is already probed by %s", pair.Target, pair.Scenario, prev)
			}
			pairs[key] = path
		}
	}
}

// jsonProblem finds the first part of a decoded YAML value that JSON cannot
// hold: a mapping key that is not a string, or a number that is not finite.
func jsonProblem(v any) (path, msg string) {
	switch v := v.(type) {
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "", fmt.Sprintf("%g is not a JSON number", v)
		}
	case map[string]any:
		for k, x := range v {
			if p, m := jsonProblem(x); m != "" {
				return "." + k + p, m
			}
		}
	case map[any]any:
		for k := range v {
			return "", fmt.Sprintf("key %v is not a string", k)
		}
	case []any:
		for i, x := range v {
			if p, m := jsonProblem(x); m != "" {
				return fmt.Sprintf("[%d]%s", i, p), m
			}
		}
	}
	return "", ""
}
