// Package verdict judges a burst's report: against a baseline (the
// regression, an engine upgrade's verdict, the max_regression gates) and
// as a whole, the one place that decides whether a burst passed.
package verdict

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/stats"
)

// significanceLevel is the p-value under which a change counts as real.
const significanceLevel = 0.05

// Judge compares report r with prev, its baseline (the previous report of
// the same burst, or a chosen one; nil if there is none), adds the burst's
// max_regression gates, and gives the verdict. It is the one place that
// decides whether a burst passed: it ran to its end, measured at least one
// request, passed every gate, and, if it swept rates, held the SLO at one of
// them. A baseline of another target, model or scenario mix is no baseline:
// RegressionSkipped says what differs (a caller may set it beforehand to say
// why there is no prev). Call it once per report.
func Judge(r, prev *report.Report, maxRegression []config.MaxRegression) {
	if r.Shard != nil {
		// A shard is a part: it passes when it measured its share and ran to
		// its end. Its share's SLO gates are shown, not judged, and it is
		// never compared with a baseline: the merged report is.
		prev = nil
		r.RegressionSkipped = r.Shard.String() + " of a split burst: the merged report (llmprobe report merge) is compared with a baseline"
		for i := range r.Gates {
			if g := &r.Gates[i]; !g.Skipped {
				g.Passed, g.Skipped = true, true
				g.Detail = fmt.Sprintf("not judged on %s's share (the merged report is): %s", r.Shard.String(), g.Detail)
			}
		}
	}
	switch {
	case prev == nil && r.RegressionSkipped == "":
		r.RegressionSkipped = "no previous report of burst " + r.Burst
	case prev != nil:
		if differs := differsFrom(r, prev); differs != "" {
			r.RegressionSkipped = fmt.Sprintf("the baseline %s is not comparable: %s", prev.ID, differs)
			prev = nil
		} else {
			r.RegressionSkipped = ""
			regress(r, prev, maxRegression)
		}
	}
	if prev == nil {
		for _, mr := range maxRegression {
			r.Gates = append(r.Gates, report.Gate{Name: regressionGateName(mr), Threshold: mr.MaxIncrease, Passed: true, Skipped: true,
				Detail: "skipped: " + r.RegressionSkipped})
		}
	}
	if r.Upgrade != nil {
		judgeUpgrade(r, prev)
	}
	r.Passed = !r.Aborted && r.Requests > 0 && (r.Sweep == nil || r.MaxRateUnderSLO != nil)
	for _, g := range r.Gates {
		r.Passed = r.Passed && g.Passed
	}
}

// differsFrom says how prev measured something else: another target, model
// or scenario mix; "" when it is a fair baseline.
func differsFrom(r, prev *report.Report) string {
	var d []string
	if prev.Shard != nil {
		d = append(d, fmt.Sprintf("it is %s of a split burst, not the whole burst", prev.Shard.String()))
	}
	if prev.Target != r.Target {
		d = append(d, fmt.Sprintf("target %q, this run %q", prev.Target, r.Target))
	}
	// An upgrade run compares across the model change that started it.
	if prev.Model != r.Model && (r.Upgrade == nil || r.Upgrade.From.Model != prev.Model) {
		d = append(d, fmt.Sprintf("model %q, this run %q", prev.Model, r.Model))
	}
	if a, b := mixOf(prev.Config), mixOf(r.Config); a != b {
		d = append(d, fmt.Sprintf("scenario mix %s, this run %s", a, b))
	}
	// A run overridden on the command line measured something else.
	if a, b := strings.Join(prev.Overrides, " "), strings.Join(r.Overrides, " "); a != b {
		d = append(d, fmt.Sprintf("overrides %q, this run %q", a, b))
	}
	return strings.Join(d, "; ")
}

// mixOf renders a report's scenario mix ("chat-short:3 long:1") from its
// configuration, whether it came from YAML or back from JSON.
func mixOf(cfg map[string]any) string {
	list, _ := cfg["scenarios"].([]any)
	parts := make([]string, 0, len(list))
	for _, item := range list {
		m, _ := item.(map[string]any)
		weight := 1.0
		switch w := m["weight"].(type) {
		case int:
			weight = float64(w)
		case float64:
			weight = w
		}
		parts = append(parts, fmt.Sprintf("%v:%s", m["scenario"], strconv.FormatFloat(weight, 'g', -1, 64)))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

func regressionGateName(mr config.MaxRegression) string {
	return fmt.Sprintf("regression_%s_%s", mr.Metric, mr.Quantile)
}

// regress compares p50 and p99 with the baseline, tests TTFT and TPOT
// samples for a significant change, and applies max_regression gates.
func regress(r, prev *report.Report, maxRegression []config.MaxRegression) {
	reg := &report.Regression{PreviousID: prev.ID, PreviousEngineVersion: prev.EngineVersion,
		EngineVersionChanged: prev.EngineVersion != "" && r.EngineVersion != "" && prev.EngineVersion != r.EngineVersion}
	pvalues := map[string]float64{}
	for _, m := range []string{"ttft", "tpot"} {
		if len(r.Samples[m]) > 1 && len(prev.Samples[m]) > 1 {
			pvalues[m] = stats.MannWhitney(r.Samples[m], prev.Samples[m])
		}
	}
	for _, m := range config.BurstMetrics {
		for _, q := range []string{"p50", "p99"} {
			cur, old := r.Latency[m].Measured(q), prev.Latency[m].Measured(q)
			if cur == nil && old == nil && m == "ttft_answer" {
				continue // neither run reasoned: nothing to compare, nothing to list
			}
			rm := report.RegressionMetric{Metric: m, Quantile: q, Previous: old, Current: cur, Ratio: ratio(cur, old)}
			if p, ok := pvalues[m]; ok {
				rm.PValue = &p
				rm.Significant = p < significanceLevel
			}
			reg.Metrics = append(reg.Metrics, rm)
		}
	}
	r.Regression = reg
	for _, mr := range maxRegression {
		g := report.Gate{Name: regressionGateName(mr), Threshold: mr.MaxIncrease}
		cur, old := r.Latency[mr.Metric].Measured(mr.Quantile), prev.Latency[mr.Metric].Measured(mr.Quantile)
		rt := ratio(cur, old)
		switch {
		case cur == nil:
			g.Detail = fmt.Sprintf("n/a: no %s samples in this run to compare with %s", mr.Metric, prev.ID)
		case rt == nil:
			g.Passed, g.Skipped = true, true
			g.Detail = fmt.Sprintf("skipped: the baseline %s has no %s samples", prev.ID, mr.Metric)
		default:
			increase := *rt - 1
			significant := true
			if mr.Significant {
				p, ok := pvalues[mr.Metric]
				significant = ok && p < significanceLevel
			}
			g.Value, g.Passed = &increase, !(increase > mr.MaxIncrease && significant)
			g.Detail = fmt.Sprintf("%s %s %.4gs vs %.4gs in %s (%+.1f%%, limit +%.1f%%)", mr.Metric, mr.Quantile, *cur, *old, prev.ID, 100*increase, 100*mr.MaxIncrease)
		}
		if reg.EngineVersionChanged {
			g.Detail += fmt.Sprintf("; engine %s -> %s", prev.EngineVersion, r.EngineVersion)
		}
		r.Gates = append(r.Gates, g)
	}
}

// ratio is cur/old, or nil when either is missing or old is not positive.
func ratio(cur, old *float64) *float64 {
	if cur == nil || old == nil || *old <= 0 {
		return nil
	}
	v := *cur / *old
	return &v
}
