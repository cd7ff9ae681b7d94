package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/stats"
)

// upgradeMetrics are the metric and quantile pairs an upgrade verdict
// judges: those the significance test covers.
var upgradeMetrics = [][2]string{{"ttft", "p50"}, {"ttft", "p99"}, {"tpot", "p50"}, {"tpot", "p99"}}

var quantileLevel = map[string]float64{"p50": 0.5, "p99": 0.99}

// changeWords says what changed: "engine vllm 0.11.0 → 0.12.0", "model a → b".
func changeWords(from, to Facts) string {
	or := func(s string) string {
		if s == "" {
			return "?"
		}
		return s
	}
	var parts []string
	switch {
	case from.Engine != to.Engine:
		parts = append(parts, fmt.Sprintf("engine %s %s → %s %s", or(from.Engine), or(from.Version), or(to.Engine), or(to.Version)))
	case from.Version != to.Version:
		parts = append(parts, fmt.Sprintf("engine %s %s → %s", or(to.Engine), or(from.Version), or(to.Version)))
	}
	if from.Model != to.Model {
		parts = append(parts, fmt.Sprintf("model %s → %s", or(from.Model), or(to.Model)))
	}
	if len(parts) == 0 {
		return fmt.Sprintf("engine %s %s (unchanged by the time the burst measured it)", or(to.Engine), or(to.Version))
	}
	return strings.Join(parts, ", ")
}

// judgeUpgrade fills the verdict from the regression against prev (nil:
// none, RegressionSkipped says why).
func judgeUpgrade(r, prev *Report) {
	u := r.Upgrade
	u.To = FactsOf(r)
	u.Changes = nil
	what := changeWords(u.From, u.To)
	if prev == nil || r.Regression == nil {
		u.Regressed = decide.UpgradeRegressed()
		u.BaselineID = ""
		u.NoBaseline = r.RegressionSkipped
		u.Summary = fmt.Sprintf("%s: no verdict, %s", what, u.NoBaseline)
		return
	}
	u.BaselineID, u.NoBaseline = prev.ID, ""
	for _, mq := range upgradeMetrics {
		for _, m := range r.Regression.Metrics {
			if m.Metric != mq[0] || m.Quantile != mq[1] {
				continue
			}
			c := UpgradeChange{Metric: m.Metric, Quantile: m.Quantile, Previous: m.Previous, Current: m.Current, PValue: m.PValue, Significant: m.Significant}
			if m.Ratio != nil {
				change := *m.Ratio - 1
				c.Change = &change
			}
			if lb, ok := stats.RatioLowerBound(r.Samples[m.Metric], prev.Samples[m.Metric], quantileLevel[m.Quantile]); ok {
				atLeast := lb - 1
				c.AtLeast = &atLeast
			}
			c.Regression = decide.UpgradeRegression(c.Significant, c.Change, c.AtLeast, u.MaxIncrease)
			u.Changes = append(u.Changes, c)
		}
	}
	regressed := make([]bool, len(u.Changes))
	for i, c := range u.Changes {
		regressed[i] = c.Regression
	}
	u.Regressed = decide.UpgradeRegressed(regressed...)
	u.Summary = what + ": " + verdictWords(u)
}

// verdictWords: "regression: p99 TPOT +31.0 %, significant (limit +10 %)",
// or "no significant change: p99 TTFT +0.4 %, p99 TPOT -1.2 %".
func verdictWords(u *Upgrade) string {
	limit := fmt.Sprintf("+%s %%", pct(u.MaxIncrease))
	var regressed, improved, small, all []string
	for _, c := range u.Changes {
		name := c.Quantile + " " + strings.ToUpper(c.Metric)
		if c.Change == nil {
			all = append(all, name+" n/a")
			continue
		}
		figure := fmt.Sprintf("%s %s %%", name, signedPct(*c.Change))
		switch {
		case c.Regression:
			regressed = append(regressed, fmt.Sprintf("%s (at least %s %% at 95 %% confidence), significant", figure, signedPct(*c.AtLeast)))
		case c.Significant && *c.Change < -u.MaxIncrease:
			improved = append(improved, figure+", significant")
		case c.Significant && c.AtLeast != nil && *c.Change > u.MaxIncrease:
			small = append(small, fmt.Sprintf("%s but only %s %% at 95 %% confidence, significant", figure, signedPct(*c.AtLeast)))
		case c.Significant:
			small = append(small, figure+", significant")
		}
		if c.Quantile == "p99" {
			all = append(all, figure)
		}
	}
	switch {
	case len(regressed) > 0:
		return fmt.Sprintf("regression: %s (limit %s)", strings.Join(regressed, "; "), limit)
	case len(improved) > 0:
		return "improvement: " + strings.Join(improved, "; ")
	case len(small) > 0:
		return fmt.Sprintf("no regression beyond %s: %s", limit, strings.Join(small, "; "))
	case len(all) == 0:
		return "no significant change"
	}
	return "no significant change: " + strings.Join(all, ", ")
}

// pct is a ratio in percent with one decimal where it has one: 0.1 → "10", 0.315 → "31.5".
func pct(v float64) string {
	p := math.Round(v*1000) / 10
	if p == math.Trunc(p) {
		return fmt.Sprintf("%.0f", p)
	}
	return fmt.Sprintf("%.1f", p)
}

func signedPct(v float64) string {
	if v >= 0 {
		return "+" + pct(v)
	}
	return "-" + pct(-v)
}
