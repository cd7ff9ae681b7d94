package config

import (
	"fmt"
	"slices"
	"time"

	"github.com/llmprobe/llmprobe/config/field"
	"github.com/llmprobe/llmprobe/config/internal/yamlerr"
)

// Comparison is an always-on comparison (canary analysis): each canary tick
// the same prompt goes to Baseline and Candidate at the same moment, and
// the pairs of the last Window are judged metric by metric.
type Comparison struct {
	Name      string `yaml:"name"`
	Baseline  string `yaml:"baseline"`
	Candidate string `yaml:"candidate"`
	// Scenarios compared; empty means every canary scenario the baseline
	// and the candidate both have, conversations left out.
	Scenarios []string `yaml:"scenarios,omitempty"`
	// Window is how far back the pairs judged reach.
	Window Duration `yaml:"window,omitempty"`
	// MinPairs is the fewest measured pairs a verdict rests on.
	MinPairs int `yaml:"min_pairs,omitempty"`
	// Tolerance is the change a verdict ignores: worse means the interval
	// lies above 1 and the ratio above 1 + Tolerance.
	Tolerance float64 `yaml:"tolerance,omitempty"`
}

// DefaultComparison's values apply to fields left out.
var DefaultComparison = Comparison{Window: Duration(10 * time.Minute), MinPairs: 20, Tolerance: 0.1}

// Bounds of a comparison. MaxComparisonWindow is the `for:` of the rule
// LLMProbeComparisonWorse (alerts/llmprobe.rules.yml): the alert then needs
// significance over at least one whole window of fresh pairs, so the
// evaluations repeated every 15 s do not multiply false alarms.
const (
	MaxComparisons      = 20
	MinComparisonWindow = 10 * time.Second
	MaxComparisonWindow = 10 * time.Minute
	minComparisonPairs  = 6 // the fewest with a 95 % signed-rank interval
	maxComparisonPairs  = 5000
)

// UnmarshalYAML applies defaults. The func-style signature keeps the decoder's strict mode.
func (c *Comparison) UnmarshalYAML(unmarshal func(any) error) error {
	*c = DefaultComparison
	type plain Comparison
	return unmarshal((*plain)(c))
}

// ComparisonPair is one compared scenario of a comparison, sent every Interval.
type ComparisonPair struct {
	Comparison Comparison
	Scenario   string
	Interval   time.Duration
}

// ComparisonPairs expands every comparison into its scenarios.
func (c *Config) ComparisonPairs() []ComparisonPair {
	var out []ComparisonPair
	for _, cmp := range c.Comparisons {
		for _, s := range c.comparedScenarios(cmp) {
			out = append(out, ComparisonPair{Comparison: cmp, Scenario: s, Interval: c.comparisonInterval(cmp.Baseline, s)})
		}
	}
	return out
}

// comparedScenarios are cmp's scenarios, or by default the canary
// scenarios of both its targets that are no conversation.
func (c *Config) comparedScenarios(cmp Comparison) []string {
	if len(cmp.Scenarios) > 0 {
		return cmp.Scenarios
	}
	has := map[[2]string]bool{}
	for _, p := range c.CanaryPairs() {
		has[[2]string{p.Target, p.Scenario}] = true
	}
	var out []string
	for _, s := range c.Scenarios {
		if s.Conversation == nil && has[[2]string{cmp.Baseline, s.Name}] && has[[2]string{cmp.Candidate, s.Name}] {
			out = append(out, s.Name)
		}
	}
	return out
}

// comparisonInterval is the baseline's canary interval for the scenario,
// or canary.interval where the baseline has no such canary.
func (c *Config) comparisonInterval(baseline, scenario string) time.Duration {
	for _, p := range c.CanaryPairs() {
		if p.Target == baseline && p.Scenario == scenario {
			return p.Interval
		}
	}
	return c.Canary.Interval.Std()
}

func (c *Config) validateComparisons(errs *field.Errors) {
	if len(c.Comparisons) > MaxComparisons {
		errs.Add("comparisons", "%d comparisons, more than the %d llmprobe runs", len(c.Comparisons), MaxComparisons)
	}
	seen := map[string]string{}
	for i, cmp := range c.Comparisons {
		path := fmt.Sprintf("comparisons[%d]", i)
		errs.Name(path, cmp.Name, "comparison", seen)
		c.knownTarget(path+".baseline", cmp.Baseline, errs)
		c.knownTarget(path+".candidate", cmp.Candidate, errs)
		if cmp.Baseline != "" && cmp.Baseline == cmp.Candidate {
			errs.Add(path+".candidate", "%q is the baseline too: a comparison needs two targets", cmp.Candidate)
		}
		errs.DurationWithin(path+".window", cmp.Window, MinComparisonWindow, MaxComparisonWindow, false)
		errs.IntWithin(path+".min_pairs", cmp.MinPairs, minComparisonPairs, maxComparisonPairs, "pairs")
		errs.Within(path+".tolerance", cmp.Tolerance, 0, 1, "")
		c.validateComparedScenarios(path, cmp, errs)
	}
}

func (c *Config) knownTarget(path, name string, errs *field.Errors) {
	if _, ok := c.Target(name); ok {
		return
	}
	if name == "" {
		errs.Add(path, "is required")
		return
	}
	msg := fmt.Sprintf("unknown target %q", name)
	if s := yamlerr.Suggest(name, targetNames(c)); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	errs.Add(path, "%s", msg)
}

func targetNames(c *Config) []string {
	out := make([]string, len(c.Targets))
	for i, t := range c.Targets {
		out[i] = t.Name
	}
	return out
}

// validateComparedScenarios checks the scenarios exist, are no
// conversation, and that the window holds min_pairs ticks of each.
func (c *Config) validateComparedScenarios(path string, cmp Comparison, errs *field.Errors) {
	for j, name := range cmp.Scenarios {
		p := fmt.Sprintf("%s.scenarios[%d]", path, j)
		s, ok := c.Scenario(name)
		switch {
		case !ok:
			errs.Add(p, "unknown scenario %q", name)
		case s.Conversation != nil:
			errs.Add(p, "%q is a conversation: its turns cannot be paired tick by tick", name)
		case slices.Index(cmp.Scenarios, name) < j:
			errs.Add(p, "scenario %q is listed twice", name)
		}
	}
	names := c.comparedScenarios(cmp)
	if len(cmp.Scenarios) == 0 && len(names) == 0 && cmp.Baseline != cmp.Candidate {
		errs.Add(path+".scenarios", "%q and %q share no canary scenario that is no conversation: name the scenarios to compare", cmp.Baseline, cmp.Candidate)
	}
	for _, name := range names {
		if _, ok := c.Scenario(name); !ok {
			continue
		}
		if every := c.comparisonInterval(cmp.Baseline, name); every > 0 && cmp.Window.Std() < time.Duration(cmp.MinPairs)*every {
			errs.Add(path+".window", "%s holds %d ticks of scenario %q (every %s), fewer than min_pairs (%d): lengthen the window or the canary's pace", cmp.Window, int(cmp.Window.Std()/every), name, every, cmp.MinPairs)
		}
	}
}
