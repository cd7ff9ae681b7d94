// Always-on comparisons (canary analysis): their fields, defaults, expansion
// into compared scenarios and validation.

package config

import (
	"fmt"
	"slices"
	"time"
)

// Comparison is one always-on comparison: each canary tick the same
// prompt goes to Baseline and Candidate at the same moment, and the pairs
// of the last Window are judged metric by metric.
type Comparison struct {
	Name      string `yaml:"name"`
	Baseline  string `yaml:"baseline"`
	Candidate string `yaml:"candidate"`
	// Scenarios compared; empty means every canary scenario the baseline
	// and the candidate both have, conversations left out.
	Scenarios []string `yaml:"scenarios,omitempty"`
	// Window is an epoch's length: the judge starts afresh after it (and
	// when a side's identity changes), so a change that comes later in the
	// day is not outweighed by the pairs before it.
	Window Duration `yaml:"window,omitempty"`
	// MinPairs is the fewest measured pairs a decision rests on.
	MinPairs int `yaml:"min_pairs,omitempty"`
	// Tolerance is the change a decision ignores: fail means the median
	// ratio is shown above 1 + Tolerance, pass that it is shown below.
	Tolerance float64 `yaml:"tolerance,omitempty"`
}

// DefaultComparison's values apply to fields left out.
var DefaultComparison = Comparison{Window: Duration(time.Hour), MinPairs: 20, Tolerance: 0.1}

// Bounds of a comparison. A window is at most a day: the day's error rate
// is split over the epochs a day holds.
const (
	MaxComparisons      = 20
	MinComparisonWindow = 10 * time.Second
	MaxComparisonWindow = 24 * time.Hour
	minPairs            = 6 // the fewest with a 95 % signed-rank interval
	maxPairs            = 5000
)

// UnmarshalYAML applies defaults. The func-style signature keeps the decoder's strict mode.
func (c *Comparison) UnmarshalYAML(unmarshal func(any) error) error {
	*c = DefaultComparison
	type plain Comparison
	return unmarshal((*plain)(c))
}

// ComparisonScope is what a comparison refers to in the rest of the configuration.
type ComparisonScope struct {
	Targets []string
	// Scenarios in their configured order, and whether each is a conversation.
	Scenarios    []string
	Conversation map[string]bool
	// Canaries maps each canary (target, scenario) to its interval;
	// Interval is canary.interval.
	Canaries map[[2]string]time.Duration
	Interval time.Duration
}

// ComparisonPair is one compared scenario of a comparison, sent every Interval.
type ComparisonPair struct {
	Comparison Comparison
	Scenario   string
	Interval   time.Duration
}

// Pairs expands comparisons into their scenarios.
func Pairs(comparisons []Comparison, s ComparisonScope) []ComparisonPair {
	var out []ComparisonPair
	for _, c := range comparisons {
		for _, sc := range s.compared(c) {
			out = append(out, ComparisonPair{Comparison: c, Scenario: sc, Interval: s.interval(c.Baseline, sc)})
		}
	}
	return out
}

// compared are c's scenarios, or by default the canary scenarios of both
// its targets that are no conversation.
func (s ComparisonScope) compared(c Comparison) []string {
	if len(c.Scenarios) > 0 {
		return c.Scenarios
	}
	var out []string
	for _, sc := range s.Scenarios {
		_, base := s.Canaries[[2]string{c.Baseline, sc}]
		_, cand := s.Canaries[[2]string{c.Candidate, sc}]
		if base && cand && !s.Conversation[sc] {
			out = append(out, sc)
		}
	}
	return out
}

// interval is the baseline's canary interval for the scenario, or
// canary.interval where the baseline has no such canary.
func (s ComparisonScope) interval(baseline, scenario string) time.Duration {
	if d, ok := s.Canaries[[2]string{baseline, scenario}]; ok {
		return d
	}
	return s.Interval
}

// Validate adds every problem of comparisons, written at "comparisons", to errs.
func Validate(comparisons []Comparison, s ComparisonScope, errs *FieldErrors) {
	if len(comparisons) > MaxComparisons {
		errs.Add("comparisons", "%d comparisons, more than the %d llmprobe runs", len(comparisons), MaxComparisons)
	}
	seen := map[string]string{}
	for i, c := range comparisons {
		path := fmt.Sprintf("comparisons[%d]", i)
		errs.Name(path, c.Name, "comparison", seen)
		s.knownTarget(path+".baseline", c.Baseline, errs)
		s.knownTarget(path+".candidate", c.Candidate, errs)
		if c.Baseline != "" && c.Baseline == c.Candidate {
			errs.Add(path+".candidate", "%q is the baseline too: a comparison needs two targets", c.Candidate)
		}
		errs.DurationWithin(path+".window", c.Window, MinComparisonWindow, MaxComparisonWindow, false)
		errs.IntWithin(path+".min_pairs", c.MinPairs, minPairs, maxPairs, "pairs")
		errs.Within(path+".tolerance", c.Tolerance, 0, 1, "")
		s.validateScenarios(path, c, errs)
	}
}

func (s ComparisonScope) knownTarget(path, name string, errs *FieldErrors) {
	switch {
	case slices.Contains(s.Targets, name):
	case name == "":
		errs.Add(path, "is required")
	default:
		errs.Unknown(path, "target", name, s.Targets)
	}
}

// validateScenarios checks the scenarios exist, are no conversation, and
// that the window holds min_pairs ticks of each.
func (s ComparisonScope) validateScenarios(path string, c Comparison, errs *FieldErrors) {
	for j, name := range c.Scenarios {
		p := fmt.Sprintf("%s.scenarios[%d]", path, j)
		switch {
		case !slices.Contains(s.Scenarios, name):
			errs.Unknown(p, "scenario", name, s.Scenarios)
		case s.Conversation[name]:
			errs.Add(p, "%q is a conversation: its turns cannot be paired tick by tick", name)
		case slices.Index(c.Scenarios, name) < j:
			errs.Add(p, "scenario %q is listed twice", name)
		}
	}
	names := s.compared(c)
	if len(c.Scenarios) == 0 && len(names) == 0 && c.Baseline != c.Candidate {
		errs.Add(path+".scenarios", "%q and %q share no canary scenario that is no conversation: name the scenarios to compare", c.Baseline, c.Candidate)
	}
	for _, name := range names {
		if !slices.Contains(s.Scenarios, name) {
			continue
		}
		if every := s.interval(c.Baseline, name); every > 0 && c.Window.Std() < time.Duration(c.MinPairs)*every {
			errs.Add(path+".window", "%s holds %d ticks of scenario %q (every %s), fewer than min_pairs (%d): lengthen the window or the canary's pace", c.Window, int(c.Window.Std()/every), name, every, c.MinPairs)
		}
	}
}
