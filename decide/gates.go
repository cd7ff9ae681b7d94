package decide

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/lib/figure"
	"github.com/llmprobe/llmprobe/stats"
)

// Gate is one pass/fail verdict with its threshold. A skipped gate could not
// be judged (no baseline) and does not fail the burst; Value is null then,
// but for a shard's SLO gates, which carry the share's value unjudged.
type Gate struct {
	Name      string   `json:"name"`
	Threshold float64  `json:"threshold"`
	Value     *float64 `json:"value"`
	Passed    bool     `json:"passed"`
	Skipped   bool     `json:"skipped,omitempty"`
	Detail    string   `json:"detail"`
	// OwnDelay, on a failed gate, counts the misses llmprobe's own delay
	// may explain when they could have passed it: its failure is then not
	// certainly the target's.
	OwnDelay int `json:"own_delay_misses,omitempty"`
	// OwnDelayDecides, on a regression gate, says llmprobe's own delay
	// alone kept it from a verdict: the figure without it could pass it
	// and the figure as measured failed it, or the other way round.
	OwnDelayDecides bool `json:"own_delay_decides,omitempty"`
	// Undecided: the sample shows neither pass nor fail (not enough
	// evidence); Passed is false and Detail says what would settle it.
	Undecided bool `json:"undecided,omitempty"`
}

// OwnDelayMisses are an objective's misses that llmprobe's own delay may
// explain: missed as measured, met without it (prober.Check.WithinOwnDelay).
type OwnDelayMisses struct {
	Requests int `json:"requests"`
	// UpTo is the largest own delay among them, in seconds.
	UpTo float64 `json:"up_to_seconds"`
}

// Shares are what a burst's SLO gates judge: the share of its requests
// that met each objective, with its 95 % Wilson interval, and how many
// answers were checked (the quality objective's sample).
type Shares struct {
	PerObjective map[string]float64
	Interval     map[string]stats.Interval
	Checked      map[string]int
	OwnDelay     map[string]OwnDelayMisses
	// Effective is what each share's requests are worth as independent
	// draws (stats.EffectiveN), where fewer than Checked.
	Effective map[string]int
}

// SLOGates are a burst's SLO gates: per objective, the share of requests
// meeting it against the strictest target ratio among the burst's scenarios
// that set it; and the share of checked answers that passed against the
// strictest quality_ratio. Each is judged by rule (config.SLORule*): by
// default the share's 95 % interval against the target (judgeShare).
func SLOGates(scenarios []config.Scenario, shares Shares, rule string) []Gate {
	var gates []Gate
	target := map[string]float64{}
	lo, hi := map[string]time.Duration{}, map[string]time.Duration{}
	for _, s := range scenarios {
		target[config.ObjectiveQuality] = max(target[config.ObjectiveQuality], s.SLO.QualityRatio)
		for _, o := range s.SLO.Objectives() {
			if s.SLO.TargetRatio > target[o.Name] {
				target[o.Name] = s.SLO.TargetRatio
			}
			if l, ok := lo[o.Name]; !ok || o.Threshold < l {
				lo[o.Name] = o.Threshold
			}
			hi[o.Name] = max(hi[o.Name], o.Threshold)
		}
	}
	names := make([]string, 0, len(target))
	for n, t := range target {
		if t > 0 {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		g := Gate{Name: "slo_" + n, Threshold: target[n]}
		checked := shares.Checked[n]
		if n == config.ObjectiveQuality {
			if checked == 0 {
				g.Detail = fmt.Sprintf("n/a: no answer was checked (no request succeeded); the target is %.2f%%", 100*target[n])
				gates = append(gates, g)
				continue
			}
			g.Detail = fmt.Sprintf("%.2f%% of %d checked answers passed their checks; the target is %.2f%%", 100*shares.PerObjective[n], checked, 100*target[n])
			// No delay of llmprobe's fails an answer's checks.
			gates = append(gates, judgeShare(g, shares.PerObjective[n], checked, shares.effective(n), OwnDelayMisses{}, rule))
			continue
		}
		limit := lo[n].String()
		if hi[n] != lo[n] {
			// Each request is held to its own scenario's threshold.
			limit = fmt.Sprintf("its scenario's threshold (%s to %s)", lo[n], hi[n])
		}
		v, ok := shares.PerObjective[n]
		if !ok || checked == 0 {
			g.Detail = fmt.Sprintf("n/a: no request was measured against %s <= %s; the target is %.2f%%", n, limit, 100*target[n])
			gates = append(gates, g)
			continue
		}
		g.Detail = fmt.Sprintf("%.2f%% of %d requests met %s <= %s; the target is %.2f%%", 100*v, checked, n, limit, 100*target[n])
		gates = append(gates, judgeShare(g, v, checked, shares.effective(n), shares.OwnDelay[n], rule))
	}
	return gates
}

// effective is what objective's share's requests are worth, 0 where every
// one counts.
func (s Shares) effective(objective string) int { return s.Effective[objective] }

// maxSettleRequests bounds the requests a gate's "would settle it" names.
const maxSettleRequests = 10_000_000

// judgeShare judges gate g on a share of n requests (its threshold the
// target) by rule. interval, the default: passed when the share's 95 %
// Wilson interval lies at or above the target; failed when it lies below
// even with the misses within llmprobe's own delay counted as met;
// inconclusive (OwnDelay) when only those misses keep it below; not enough
// evidence (Undecided) when it reaches across, saying how many requests at
// this share would settle it. point: the share as counted against the
// target, an error budget, said as the rule. eff, where above 0, is what
// the n requests are worth as independent draws: the interval is over it.
func judgeShare(g Gate, share float64, n, eff int, own OwnDelayMisses, rule string) Gate {
	met := int(math.Round(share * float64(n)))
	g.Value = &share
	if eff <= 0 || eff > n {
		eff = n
	}
	lo, hi, _ := stats.WilsonAt(met, n, eff)
	_, hiOwn, _ := stats.WilsonAt(met+own.Requests, n, eff)
	best := float64(met+own.Requests) / float64(n)
	passed, missed, missedAsMeasured := lo >= g.Threshold, hiOwn < g.Threshold, hi < g.Threshold
	if rule == config.SLORulePoint {
		passed, missed, missedAsMeasured = share >= g.Threshold, best < g.Threshold, share < g.Threshold
	}
	if eff < n {
		g.Detail += fmt.Sprintf(" (the share's 95%% Wilson interval: %.1f%%–%.1f%%, over the %d independent requests the %d are worth by batch means: requests of one run queue together)", 100*lo, 100*hi, eff, n)
	} else {
		g.Detail += fmt.Sprintf(" (the share's 95%% Wilson interval: %.1f%%–%.1f%%)", 100*lo, 100*hi)
	}
	switch {
	case passed:
		g.Passed = true
		if rule == config.SLORulePoint {
			g.Detail += "; rule point: the share as counted meets the target"
		}
		return g
	case missed && own.Requests == 0:
		g.Detail += "; every miss is larger than llmprobe's own delay in it: certainly the target's"
	case missed:
		g.Detail += fmt.Sprintf("; %d misses are within llmprobe's own delay (up to %s), too few to change the verdict", own.Requests, figure.Ms(own.UpTo))
	case missedAsMeasured:
		g.OwnDelay = own.Requests
		g.Detail += fmt.Sprintf("; %d of the misses are within llmprobe's own delay (up to %s), which may have been the whole miss: without it the share could reach %.2f%%",
			own.Requests, figure.Ms(own.UpTo), 100*best)
	default:
		g.Undecided = true
		g.Detail += "; not enough evidence: the interval reaches across the target"
		if need := stats.WilsonToSettle(share, g.Threshold, maxSettleRequests); need > 0 {
			// Correlated requests are worth eff/n each: more of them settle it.
			need = int(math.Ceil(float64(need) * float64(n) / float64(eff)))
			g.Detail += fmt.Sprintf(", which about %d requests at this share would settle", need)
		}
	}
	if rule == config.SLORulePoint && !passed {
		g.Detail += "; rule point: the share as counted"
	}
	return g
}
