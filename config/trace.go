package config

import (
	"fmt"
	"path/filepath"
)

// Trace formats.
const (
	TraceAzure    = "azure"
	TraceMooncake = "mooncake"
)

// validateTrace checks a trace burst's fields; plan reads its file.
func (b *Burst) validateTrace(path string, cfg *Config, errs *FieldErrors) {
	a := &b.Arrival
	p := path + ".arrival"
	if a.File == "" {
		errs.Add(p+".file", "is required for process: trace")
	}
	if a.Format != "" && a.Format != TraceAzure && a.Format != TraceMooncake {
		errs.Add(p+".format", "%q must be %s or %s (or left out to detect it)", a.Format, TraceAzure, TraceMooncake)
	}
	if a.Speedup != 0 && !(a.Speedup > 0 && a.Speedup <= MaxSpeedup) {
		errs.Add(p+".speedup", "%g must be above 0 and at most %d (it divides the trace's gaps)", a.Speedup, MaxSpeedup)
	}
	if a.Rate != 0 {
		errs.Add(p+".rate", "a trace sets its own arrival times; leave rate out (speedup scales them)")
	}
	if b.Sweep != nil {
		errs.Add(path+".sweep", "a trace burst replays its own rate and cannot sweep")
	}
	for i, ws := range b.Scenarios {
		s, found := cfg.Scenario(ws.Scenario)
		switch {
		case found && s.Prompt != "":
			errs.Add(fmt.Sprintf("%s.scenarios[%d]", path, i), "scenario %q sends a literal prompt; a trace sets prompt lengths", ws.Scenario)
		case found && (s.PromptDataset != nil || s.Golden != nil):
			errs.Add(fmt.Sprintf("%s.scenarios[%d]", path, i), "scenario %q draws its prompts from a dataset or golden set; a trace sets prompt lengths", ws.Scenario)
		case found && s.Conversation != nil:
			errs.Add(fmt.Sprintf("%s.scenarios[%d]", path, i), "scenario %q is a conversation; a trace replays single requests", ws.Scenario)
		}
	}
}

// setTraceDirectory makes relative trace files relative to dir.
func (c *Config) setTraceDirectory(dir string) {
	for i := range c.Bursts {
		if f := c.Bursts[i].Arrival.File; f != "" && !filepath.IsAbs(f) {
			c.Bursts[i].Arrival.File = filepath.Join(dir, f)
		}
	}
}
