package plan

import (
	"fmt"

	"github.com/llmprobe/llmprobe/stats"
)

// Unsettled says what a run of b measures too few requests to judge: each
// max_regression gate on a percentile that needs more samples than the
// run's fewest planned measured requests (at its lowest rate). Such a gate
// is never judged (a percentile below the too-few rule is never gated),
// so a configuration that asks for it is told at --config.check.
func (b *Burst) Unsettled() []string {
	planned := -1
	for _, r := range b.Rates() {
		if n := b.PlannedMeasured(r); planned < 0 || n < planned {
			planned = n
		}
	}
	if planned <= 0 {
		return nil // a trace's count is read by its run
	}
	var out []string
	for _, mr := range b.MaxRegression {
		if need := stats.Needs(mr.Quantile); need > planned {
			out = append(out, fmt.Sprintf("burst %s: max_regression %s %s needs %d samples a run and the run plans %d measured requests: the gate will never be judged; gate a lower percentile, or plan at least %d requests",
				b.Name, mr.Metric, mr.Quantile, need, planned, need))
		}
	}
	return out
}
