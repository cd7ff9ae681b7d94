package config

import (
	"fmt"
	"net/url"
	"slices"
	"time"
)

// Request fields the prober owns; extra_body must not override them.
var reservedBodyKeys = []string{"model", "prompt", "messages", "input", "query", "documents", "stream", "max_tokens", "max_completion_tokens"}

func (c *Config) validate() FieldErrors {
	var errs FieldErrors
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
		path := fmt.Sprintf("scenarios[%d]", i)
		errs.Name(path, c.Scenarios[i].Name, "scenario", seen)
		c.Scenarios[i].Validate(path, &errs)
	}
	c.Canary.validate(c, &errs)
	seen = map[string]string{}
	for i := range c.Bursts {
		c.Bursts[i].validate(fmt.Sprintf("bursts[%d]", i), c, seen, &errs)
	}
	c.validateEmbeddings(&errs)
	Validate(c.Comparisons, c.comparisonScope(), &errs)
	c.Limits.validate(&errs)
	if c.Probe != nil {
		c.Probe.validateTemplate(&errs)
	}
	if c.Tracing != nil {
		c.Tracing.validate(&errs)
	}

	return errs
}

// validateEmbeddings refuses, on each scenario an embeddings or rerank
// target runs, what judges output tokens: such a request has none; images
// on a scenario any target but a chat one runs; and tools and response
// formats where neither chat nor the Responses API runs it.
func (c *Config) validateEmbeddings(errs *FieldErrors) {
	runs := map[[2]string]bool{}
	for _, p := range c.CanaryPairs() {
		runs[[2]string{p.Target, p.Scenario}] = true
	}
	for _, b := range c.Bursts {
		for _, ws := range b.Scenarios {
			runs[[2]string{b.Target, ws.Scenario}] = true
		}
	}
	for i, s := range c.Scenarios {
		var runners []Runner
		for _, t := range c.Targets {
			if runs[[2]string{t.Name, s.Name}] {
				runners = append(runners, Runner{Target: fmt.Sprintf("%s target %q", t.API, t.Name),
					Pooled: t.API == APIEmbeddings || t.API == APIRerank, Chat: t.API == APIChat,
					Tools: t.API == APIChat || t.API == APIResponses || t.API == APIMessages, Formats: t.API == APIChat || t.API == APIResponses,
					Transcribes: t.API == APITranscriptions})
			}
		}
		s.RefuseOn(fmt.Sprintf("scenarios[%d]", i), runners, errs)
	}
}

func (t *Target) validate(path string, seen map[string]string, errs *FieldErrors) {
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
func (t *Target) validateTemplate(errs *FieldErrors) {
	if t.Name != "" {
		errs.Add("probe.name", "cannot be set: /probe results carry no target name")
	}
	if t.URL != "" {
		errs.Add("probe.url", "cannot be set: the URL is /probe's target parameter")
	}
	if t.EngineMetrics != nil {
		errs.Add("probe.engine_metrics", "cannot be set: /probe measures one request, with no engine metrics around it")
	}
	if t.Autoscaling != nil {
		errs.Add("probe.autoscaling", "cannot be set: /probe's targets are found at scrape time and run no sweeps")
	}
	t.validateSettings("probe", errs)
}

// validateSettings checks everything of a target but its name and URL.
func (t *Target) validateSettings(path string, errs *FieldErrors) {
	if !slices.Contains(APIs, t.API) {
		errs.Add(path+".api", "%q must be %q, %q, %q, %q, %q, %q or %q", t.API, APIChat, APICompletions, APIResponses, APIMessages, APIEmbeddings, APIRerank, APITranscriptions)
	}
	errs.DurationWithin(path+".timeout", t.Timeout, 100*time.Millisecond, time.Hour, false)
	errs.DurationWithin(path+".info_interval", t.InfoInterval, time.Second, 24*time.Hour, false)
	for _, k := range reservedBodyKeys {
		if _, ok := t.ExtraBody[k]; ok {
			errs.Add(path+".extra_body."+k, "%q is set by the prober from the scenario and cannot be overridden", k)
		}
	}
	for k, v := range t.ExtraBody {
		if sub, msg := JSONProblem(v); msg != "" {
			errs.Add(path+".extra_body."+k+sub, "%s; extra_body must encode to JSON", msg)
		}
		if t.API != APITranscriptions {
			continue
		}
		switch v.(type) {
		case string, bool, int, int64, uint64, float64:
		default:
			errs.Add(path+".extra_body."+k, "must be a string, number or boolean: a transcription request is a form, whose fields hold no lists or maps")
		}
		if k == "file" || k == "stream_include_usage" || k == "language" {
			errs.Add(path+".extra_body."+k, "%q is set by the prober from the scenario and cannot be overridden", k)
		}
	}
	if err := t.HTTPClientConfig.Validate(); err != nil {
		errs.Add(path+".http_client_config", "%v", err)
	}
	if t.EngineMetrics != nil {
		t.EngineMetrics.validate(path+".engine_metrics", errs)
	}
	if t.Autoscaling != nil {
		t.Autoscaling.validate(path+".autoscaling", errs)
	}
	if t.Replicas != nil {
		t.Replicas.validate(path+".replicas", errs)
	}
}

func (c *Canary) validate(cfg *Config, errs *FieldErrors) {
	errs.DurationWithin("canary.interval", c.Interval, 100*time.Millisecond, 24*time.Hour, false)
	if c.Jitter < 0 || c.Jitter >= c.Interval {
		errs.Add("canary.jitter", "%s must be at least 0s and less than the interval (%s)", c.Jitter, c.Interval)
	}
	pairs := map[[2]string]string{}
	for i, p := range c.Probes {
		path := fmt.Sprintf("canary.probes[%d]", i)
		for j, t := range p.Targets {
			if _, ok := cfg.Target(t); !ok {
				errs.Unknown(fmt.Sprintf("%s.targets[%d]", path, j), "target", t, cfg.targetNames())
			}
		}
		for j, s := range p.Scenarios {
			if _, ok := cfg.Scenario(s); !ok {
				errs.Unknown(fmt.Sprintf("%s.scenarios[%d]", path, j), "scenario", s, cfg.scenarioNames())
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
