package decide

import (
	"fmt"
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
}

// SLOGates are a burst's SLO gates: per objective, the share of requests
// meeting it against the strictest target ratio among the burst's scenarios
// that set it; and the share of checked answers that passed against the
// strictest quality_ratio.
func SLOGates(scenarios []config.Scenario, shares Shares) []Gate {
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
		if n == config.ObjectiveQuality {
			gates = append(gates, qualityGate(shares, target[n]))
			continue
		}
		limit := lo[n].String()
		if hi[n] != lo[n] {
			// Each request is held to its own scenario's threshold.
			limit = fmt.Sprintf("its scenario's threshold (%s to %s)", lo[n], hi[n])
		}
		v, ok := shares.PerObjective[n]
		if !ok {
			gates = append(gates, Gate{Name: "slo_" + n, Threshold: target[n],
				Detail: fmt.Sprintf("n/a: no request was measured against %s <= %s; the target is %.2f%%", n, limit, 100*target[n])})
			continue
		}
		g := Gate{
			Name: "slo_" + n, Threshold: target[n], Value: &v, Passed: v >= target[n],
			Detail: fmt.Sprintf("%.2f%% of requests met %s <= %s; the target is %.2f%% (the share's 95%% Wilson interval: %s)", 100*v, n, limit, 100*target[n], shares.Interval[n].Text("%.1f%%", 100)),
		}
		ownDelay(&g, shares, n)
		gates = append(gates, g)
	}
	return gates
}

// qualityGate holds the share of checked answers that passed their checks
// (golden lines, quality) to target. Fewer answers than could show target
// at 95 % confidence (stats.MinSamples) keep the verdict and say so.
func qualityGate(shares Shares, target float64) Gate {
	g := Gate{Name: "slo_" + config.ObjectiveQuality, Threshold: target}
	n := shares.Checked[config.ObjectiveQuality]
	if n == 0 {
		g.Detail = fmt.Sprintf("n/a: no answer was checked (no request succeeded); the target is %.2f%%", 100*target)
		return g
	}
	v := shares.PerObjective[config.ObjectiveQuality]
	g.Value, g.Passed = &v, v >= target
	g.Detail = fmt.Sprintf("%.2f%% of %d checked answers passed their checks; the target is %.2f%% (the share's 95%% Wilson interval: %s)",
		100*v, n, 100*target, shares.Interval[config.ObjectiveQuality].Text("%.1f%%", 100))
	if need := stats.MinSamples(target); n < need {
		g.Detail += fmt.Sprintf("; too few: %d answers cannot show %.2f%% (needs %d)", n, 100*target, need)
	}
	return g
}

// ownDelay says, on a failed SLO gate g of objective n, the misses
// llmprobe's own delay may explain, and marks the failure as not certainly
// the target's when, counted as met, they would pass it; without any, that
// every miss is the target's.
func ownDelay(g *Gate, shares Shares, n string) {
	o, checked := shares.OwnDelay[n], shares.Checked[n]
	if g.Passed || checked == 0 {
		return
	}
	if o.Requests == 0 {
		g.Detail += "; every miss is larger than llmprobe's own delay in it: certainly the target's"
		return
	}
	if best := *g.Value + float64(o.Requests)/float64(checked); best >= g.Threshold {
		g.OwnDelay = o.Requests
		g.Detail += fmt.Sprintf("; %d of the misses are within llmprobe's own delay (up to %s), which may have been the whole miss: without it the share could reach %.2f%%",
			o.Requests, figure.Ms(o.UpTo), 100*best)
		return
	}
	g.Detail += fmt.Sprintf("; %d misses are within llmprobe's own delay (up to %s), too few to change the verdict", o.Requests, figure.Ms(o.UpTo))
}
