package config

import (
	"time"
)

// ComparisonPairs expands every comparison into its scenarios.
func (c *Config) ComparisonPairs() []ComparisonPair {
	return Pairs(c.Comparisons, c.comparisonScope())
}

// comparisonScope is what comparisons refer to in c.
func (c *Config) comparisonScope() ComparisonScope {
	s := ComparisonScope{Conversation: map[string]bool{}, Canaries: map[[2]string]time.Duration{}, Interval: c.Canary.Interval.Std()}
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
