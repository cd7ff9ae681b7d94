package config

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/config/internal/yamlerr"
)

// LookupBurst returns the named burst, or an error that suggests the
// closest configured name and lists them all.
func (c *Config) LookupBurst(name string) (Burst, error) {
	if b, ok := c.Burst(name); ok {
		return b, nil
	}
	names := make([]string, len(c.Bursts))
	for i, b := range c.Bursts {
		names[i] = b.Name
	}
	msg := fmt.Sprintf("unknown burst %q", name)
	if s := yamlerr.Suggest(name, names); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	if len(names) == 0 {
		return Burst{}, errors.New(msg + "; the configuration has no bursts")
	}
	return Burst{}, errors.New(msg + "; configured: " + strings.Join(names, ", "))
}

// Override changes one burst for one run, as `llmprobe gate`'s flags do.
// Empty strings and nil pointers keep the configured value.
type Override struct {
	// URL and Model replace the burst's target's; its http_client_config
	// (auth, TLS) goes with it.
	URL, Model string
	// Rate replaces the arrival rate, and a sweep: the burst runs at this one rate.
	Rate *float64
	// Duration bounds the measured part instead of the configured duration
	// or request count.
	Duration *time.Duration
}

// Flags lists the overrides as the gate's flags, for the report.
func (o Override) Flags() []string {
	var out []string
	if o.URL != "" {
		out = append(out, "--target.url="+o.URL)
	}
	if o.Model != "" {
		out = append(out, "--target.model="+o.Model)
	}
	if o.Rate != nil {
		out = append(out, "--rate="+strconv.FormatFloat(*o.Rate, 'g', -1, 64))
	}
	if o.Duration != nil {
		out = append(out, "--duration="+o.Duration.String())
	}
	return out
}

// Overridden returns a copy of c in which burst name runs with o applied,
// validated again as a loaded file is, by checks too, so an override out
// of range gets the same error as the file would, naming the flag. The
// burst's target changes in the copy only.
func (c *Config) Overridden(name string, o Override, checks ...Check) (*Config, error) {
	// Said without the URL, which would show the secret.
	if strings.Contains(o.URL, "@") {
		return nil, errors.New("--target.url: must not carry credentials; use the target's http_client_config basic_auth or authorization")
	}
	if strings.Contains(o.URL, "?") {
		return nil, errors.New("--target.url: must not have a query; keys belong in the target's http_client_config")
	}
	if o.Duration != nil && *o.Duration <= 0 {
		return nil, fmt.Errorf("--duration: %s must be positive", *o.Duration)
	}
	bi := slices.IndexFunc(c.Bursts, func(b Burst) bool { return b.Name == name })
	if bi < 0 {
		_, err := c.LookupBurst(name)
		return nil, err
	}
	cp := *c
	cp.Targets, cp.Scenarios, cp.Bursts = slices.Clone(c.Targets), slices.Clone(c.Scenarios), slices.Clone(c.Bursts)
	b := &cp.Bursts[bi]
	ti := slices.IndexFunc(cp.Targets, func(t Target) bool { return t.Name == b.Target })
	if o.URL != "" {
		cp.Targets[ti].URL = o.URL
	}
	if o.Model != "" {
		cp.Targets[ti].Model = o.Model
	}
	if o.Rate != nil {
		b.Arrival.Rate, b.Sweep, b.Capacity, b.Cost = *o.Rate, nil, nil, nil
	}
	if o.Duration != nil {
		b.Duration, b.Requests = Duration(*o.Duration), 0
	}
	errs := cp.check(checks)
	if len(errs) == 0 {
		return &cp, nil
	}
	flags := map[string]string{
		fmt.Sprintf("targets[%d].url", ti):         "--target.url",
		fmt.Sprintf("bursts[%d].arrival.rate", bi): "--rate",
		fmt.Sprintf("bursts[%d].duration", bi):     "--duration",
		fmt.Sprintf("bursts[%d]", bi):              "burst " + name + " with " + strings.Join(o.Flags(), " "),
	}
	msgs := make([]error, len(errs))
	for i, fe := range errs {
		where := fe.Path
		if f, ok := flags[fe.Path]; ok {
			where = f
		}
		msgs[i] = errors.New(where + ": " + fe.Msg)
	}
	return nil, errors.Join(msgs...)
}
