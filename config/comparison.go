package config

import (
	"time"

	"github.com/llmprobe/llmprobe/config/analysis"
)

// Comparison is an always-on comparison (config/analysis).
type Comparison = analysis.Comparison

// ComparisonPair is one compared scenario of a comparison.
type ComparisonPair = analysis.Pair

// ComparisonPairs expands every comparison into its scenarios.
func (c *Config) ComparisonPairs() []ComparisonPair {
	return analysis.Pairs(c.Comparisons, c.comparisonScope())
}

// comparisonScope is what comparisons refer to in c.
func (c *Config) comparisonScope() analysis.Scope {
	s := analysis.Scope{Conversation: map[string]bool{}, Canaries: map[[2]string]time.Duration{}, Interval: c.Canary.Interval.Std()}
	for _, t := range c.Targets {
		s.Targets = append(s.Targets, t.Name)
	}
	for _, sc := range c.Scenarios {
		s.Scenarios = append(s.Scenarios, sc.Name)
		s.Conversation[sc.Name] = sc.Conversation != nil
	}
	for _, p := range c.CanaryPairs() {
		s.Canaries[[2]string{p.Target, p.Scenario}] = p.Interval
	}
	return s
}
