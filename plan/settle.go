package plan

import (
	"fmt"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/stats"
)

// Unsettled says what a run of b measures too few requests to judge, at
// its fewest planned measured requests (its lowest rate): an SLO target
// whose interval could not lie at or above it even were every request to
// meet it (slo_rule interval), and a max_regression gate on a percentile
// that needs more samples (a percentile below the too-few rule is never
// gated). A configuration that asks for either is told at --config.check.
func (b *Burst) Unsettled() []string {
	planned := -1
	for _, r := range b.Rates() {
		n := b.PlannedMeasured(r)
		if b.Arrival.Process == config.ArrivalTrace {
			_, n = b.Requests(r) // the trace's own count, read at load
		}
		if planned < 0 || n < planned {
			planned = n
		}
	}
	if planned <= 0 {
		return nil
	}
	var out []string
	if b.SLORule != config.SLORulePoint {
		out = append(out, b.unsettledSLO(planned)...)
	}
	for _, mr := range b.MaxRegression {
		if need := stats.Needs(mr.Quantile); need > planned {
			out = append(out, fmt.Sprintf("burst %s: max_regression %s %s needs %d samples a run and the run plans %d measured requests: the gate will never be judged; gate a lower percentile, or plan at least %d requests",
				b.Name, mr.Metric, mr.Quantile, need, planned, need))
		}
	}
	return out
}

// unsettledSLO says which of b's SLO targets planned requests could not
// show met by their interval: target_ratio per objective, quality_ratio.
func (b *Burst) unsettledSLO(planned int) []string {
	strictest, quality := 0.0, 0.0
	for _, sc := range b.ScenarioConfigs() {
		if len(sc.SLO.Objectives()) > 0 {
			strictest = max(strictest, sc.SLO.TargetRatio)
		}
		quality = max(quality, sc.SLO.QualityRatio)
	}
	var out []string
	for _, t := range []struct {
		name   string
		target float64
	}{{"target_ratio", strictest}, {"quality_ratio", quality}} {
		if t.target <= 0 {
			continue
		}
		if need := stats.WilsonToSettle(1, t.target, 1<<30); need > planned {
			out = append(out, fmt.Sprintf("burst %s: an SLO %s of %g%% needs at least %d measured requests a run for its interval to show it met, and the run plans %d: its gate could only ever have not enough evidence; plan at least %d requests, or set slo_rule: point to count the error budget",
				b.Name, t.name, 100*t.target, need, planned, need))
		}
	}
	return out
}
