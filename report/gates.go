package report

import (
	"fmt"
	"sort"
	"time"

	"github.com/llmprobe/llmprobe/config/workload"
)

// gates: per objective, the share of requests meeting it against the
// strictest target ratio among the burst's scenarios that set it.
func (r *Report) gates(scenarios []workload.Scenario) {
	target := map[string]float64{}
	lo, hi := map[string]time.Duration{}, map[string]time.Duration{}
	for _, s := range scenarios {
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
	for n := range target {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		limit := lo[n].String()
		if hi[n] != lo[n] {
			// Each request is held to its own scenario's threshold.
			limit = fmt.Sprintf("its scenario's threshold (%s to %s)", lo[n], hi[n])
		}
		v, ok := r.Goodput.PerObjective[n]
		if !ok {
			r.Gates = append(r.Gates, Gate{Name: "slo_" + n, Threshold: target[n],
				Detail: fmt.Sprintf("n/a: no request was measured against %s <= %s; the target is %.2f%%", n, limit, 100*target[n])})
			continue
		}
		r.Gates = append(r.Gates, Gate{
			Name: "slo_" + n, Threshold: target[n], Value: figure(v, true), Passed: v >= target[n],
			Detail: fmt.Sprintf("%.2f%% of requests met %s <= %s; the target is %.2f%% (the share's 95%% Wilson interval: %s)", 100*v, n, limit, 100*target[n], r.Goodput.PerObjectiveInterval[n].Text("%.1f%%", 100)),
		})
	}
}
