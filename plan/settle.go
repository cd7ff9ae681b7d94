package plan

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

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
	if b.judgesNothing() {
		return []string{fmt.Sprintf("burst %s: nothing to judge: its scenarios set no SLO and it has no max_regression, so a gate measures it and says \"measured, nothing judged\" (exit 3)", b.Name)}
	}
	planned, lowest := -1, 0.0
	for _, r := range b.Rates() {
		n := b.PlannedMeasured(r)
		if b.Arrival.Process == config.ArrivalTrace {
			_, n = b.Requests(r) // the trace's own count, read at load
		}
		if planned < 0 || n < planned {
			planned, lowest = n, r
		}
	}
	if planned <= 0 {
		return nil
	}
	var out []string
	if b.SLORule != config.SLORulePoint {
		out = append(out, b.unsettledSLO(lowest, planned)...)
	}
	if t := config.SweepTargetRatio(b.Burst, b.ScenarioConfigs()); b.Sweep != nil && t > 0 && t < 1 {
		if need := SweepStepNeeds(t); planned < need {
			out = append(out, fmt.Sprintf("burst %s: its sweep steps plan %d measured requests; near the knee a step needs about %d to show a goodput of %.4g%% (halfway from the %.4g%% target to twice its misses) as failed, since queueing makes a step's requests worth about a third as many independent ones: shorter steps leave the knee's interval wide, or the overload they end before unseen; plan at least %d requests a step",
				b.Name, planned, need, 100*(t-(1-t)/2), 100*t, need))
		}
	}
	for _, mr := range b.MaxRegression {
		if need := stats.Needs(mr.Quantile); mr.Metric != config.Goodput && need > planned {
			out = append(out, fmt.Sprintf("burst %s: max_regression %s %s needs %d samples a run and the run plans %d measured requests: the gate will never be judged; gate a lower percentile, or plan at least %d requests",
				b.Name, mr.Metric, mr.Quantile, need, planned, need))
		}
		if w := b.assumedReach(mr); b.Repeat < 2 && w >= mr.Limit() {
			out = append(out, fmt.Sprintf("burst %s: max_regression %s: between two single runs its interval reaches at least ±%s from the assumed spread alone, past its limit of %s, so until the burst keeps 5 comparable runs it can only fail or have not enough evidence; set repeat, a wider limit, or the gate's spread",
				b.Name, strings.TrimSpace(mr.Metric+" "+mr.Quantile), reachText(mr, w), reachText(mr, mr.Limit())))
		}
	}
	return out
}

// assumedReach is the half-width of a max_regression gate's 95 % interval
// between two single runs from its assumed spread alone, on its limit's
// scale: the least it could be, with no sampling error in either run.
func (b *Burst) assumedReach(mr config.MaxRegression) float64 {
	s, _ := mr.SpreadOf()
	if mr.Metric != config.Goodput {
		s = math.Log1p(s)
	}
	return stats.TQuantile(0) * math.Sqrt2 * s
}

// reachText prints a reach on mr's scale: "+14.5%", "2.8 pp".
func reachText(mr config.MaxRegression, w float64) string {
	if mr.Metric == config.Goodput {
		return fmt.Sprintf("%.1f pp", 100*w)
	}
	return fmt.Sprintf("%.1f%%", 100*math.Expm1(w))
}

// unsettledSLO says which of b's SLO gates a run at rate, planning
// planned measured requests, could not show met by their interval: per
// objective, the requests of the scenarios that set it against the
// strictest target_ratio among them; per quality_ratio the same.
func (b *Burst) unsettledSLO(rate float64, planned int) []string {
	perScenario := make([]int, len(b.Mix))
	if b.Arrival.Process == config.ArrivalTrace {
		for i := range perScenario {
			perScenario[i] = planned // the trace's count, its mix unread
		}
	} else {
		for a := range b.Arrivals(rate) {
			if !a.Warmup {
				perScenario[a.Scenario] += b.Mix[a.Scenario].TurnsOf()
			}
		}
	}
	target, count := map[string]float64{}, map[string]int{}
	for i, sc := range b.ScenarioConfigs() {
		for _, o := range sc.SLO.Objectives() {
			target[o.Name], count[o.Name] = max(target[o.Name], sc.SLO.TargetRatio), count[o.Name]+perScenario[i]
		}
		if q := sc.SLO.QualityRatio; q > 0 {
			n := config.ObjectiveQuality
			target[n], count[n] = max(target[n], q), count[n]+perScenario[i]
		}
	}
	var out []string
	for _, n := range slices.Sorted(maps.Keys(target)) {
		if target[n] <= 0 {
			continue
		}
		if need := stats.WilsonToSettle(1, target[n], 1<<30); need > count[n] {
			out = append(out, fmt.Sprintf("burst %s: slo_%s's target of %g%% needs at least %d measured requests of the scenarios that set it for its interval to show it met, and a run plans %d: the gate could only ever have not enough evidence; plan at least %d, or set slo_rule: point to count the error budget",
				b.Name, n, 100*target[n], need, count[n], need))
		}
	}
	return out
}

// stepWorth is the share of a sweep step's requests that batch means
// typically leaves as independent draws near the knee, where requests
// queue together (measured on the sim's long runs).
const stepWorth = 3

// SweepStepNeeds is the fewest measured requests a sweep step needs so
// that a goodput halfway from the target t to twice its misses (85 % for a
// target of 90 %) shows as failed, at a third of their count as
// independent draws.
func SweepStepNeeds(t float64) int {
	return stepWorth * stats.WilsonToSettle(t-(1-t)/2, t, 1<<30)
}

// judgesNothing reports whether no gate could judge b: no objective or
// answer-quality target in its scenarios, no regression gate, no sweep
// (which judges its steps).
func (b *Burst) judgesNothing() bool {
	if len(b.MaxRegression) > 0 || b.Sweep != nil {
		return false
	}
	for _, s := range b.ScenarioConfigs() {
		if len(s.SLO.Objectives()) > 0 || s.SLO.QualityRatio > 0 {
			return false
		}
	}
	return true
}
