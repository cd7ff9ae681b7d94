package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/llmprobe/llmprobe/stats"
)

// Facts are what a target said it runs: engine, engine version and the
// model llmprobe measures. Each is sanitised and bounded by the prober.
type Facts struct {
	Engine  string `json:"engine"`
	Version string `json:"engine_version"`
	Model   string `json:"model"`
}

// FactsOf are the facts a report measured.
func FactsOf(r *Report) Facts {
	return Facts{Engine: r.Engine, Version: r.EngineVersion, Model: r.Model}
}

// Upgrade is the verdict of a run an engine change started: its TTFT and
// TPOT against the burst's last report from before the change.
type Upgrade struct {
	// From are the facts before the change; To what this run measured.
	From Facts `json:"from"`
	To   Facts `json:"to"`
	// BaselineID is the report from before the change; empty when there
	// is none, and NoBaseline says why.
	BaselineID  string  `json:"baseline_id,omitempty"`
	NoBaseline  string  `json:"no_baseline,omitempty"`
	MaxIncrease float64 `json:"max_increase"`
	// Regressed is set when a quantile's change is significant and, at 95 %
	// confidence, larger than MaxIncrease.
	Regressed bool            `json:"regressed"`
	Changes   []UpgradeChange `json:"changes"`
	// Summary says it in one line: "engine vllm 0.11.0 → 0.12.0: regression: p99 TPOT +31.0 %, significant ...".
	Summary string `json:"summary"`
}

// UpgradeChange is one quantile's change over the change of engine; a side
// without samples is null, and so is the change.
type UpgradeChange struct {
	Metric   string   `json:"metric"`
	Quantile string   `json:"quantile"`
	Previous *float64 `json:"previous"`
	Current  *float64 `json:"current"`
	// Change is relative: 0.31 is +31 %.
	Change *float64 `json:"change"`
	// AtLeast is the change's one-sided 95 % lower confidence bound, by
	// bootstrap of both samples: a p99 moved by one slow request has a low
	// one, a p99 the whole sample moved keeps it near Change.
	AtLeast *float64 `json:"at_least"`
	// PValue is the Mann-Whitney test's on the metric's samples; Significant
	// when it is under 0.05.
	PValue      *float64 `json:"p_value"`
	Significant bool     `json:"significant"`
	// Regression: significant, and AtLeast above MaxIncrease.
	Regression bool `json:"regression"`
}

// UpgradeMetrics are the metric and quantile pairs an upgrade verdict
// judges: those the significance test covers.
var UpgradeMetrics = [][2]string{{"ttft", "p50"}, {"ttft", "p99"}, {"tpot", "p50"}, {"tpot", "p99"}}

var quantileLevel = map[string]float64{"p50": 0.5, "p99": 0.99}

// ExpectUpgrade marks the report as the run of an engine change from the
// given facts; Judge then gives the upgrade verdict against its prev,
// which the caller chose as the burst's last report from those facts.
func (r *Report) ExpectUpgrade(from Facts, maxIncrease float64) {
	r.Upgrade = &Upgrade{From: from, MaxIncrease: maxIncrease}
}

// String is "vllm 0.11.0 (model m)", with "?" for what the target did not say.
func (f Facts) String() string {
	or := func(s string) string {
		if s == "" {
			return "?"
		}
		return s
	}
	return fmt.Sprintf("%s %s (model %s)", or(f.Engine), or(f.Version), or(f.Model))
}

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
func (r *Report) judgeUpgrade(prev *Report) {
	u := r.Upgrade
	u.To = FactsOf(r)
	u.Changes, u.Regressed = nil, false
	what := changeWords(u.From, u.To)
	if prev == nil || r.Regression == nil {
		u.BaselineID = ""
		u.NoBaseline = r.RegressionSkipped
		u.Summary = fmt.Sprintf("%s: no verdict, %s", what, u.NoBaseline)
		return
	}
	u.BaselineID, u.NoBaseline = prev.ID, ""
	for _, mq := range UpgradeMetrics {
		for _, m := range r.Regression.Metrics {
			if m.Metric != mq[0] || m.Quantile != mq[1] {
				continue
			}
			c := UpgradeChange{Metric: m.Metric, Quantile: m.Quantile, Previous: m.Previous, Current: m.Current, PValue: m.PValue, Significant: m.Significant}
			if m.Ratio != nil {
				c.Change = figure(*m.Ratio-1, true)
			}
			if lb, ok := stats.RatioLowerBound(r.Samples[m.Metric], prev.Samples[m.Metric], quantileLevel[m.Quantile]); ok {
				c.AtLeast = figure(lb-1, true)
			}
			c.Regression = c.Significant && c.Change != nil && c.AtLeast != nil && *c.AtLeast > u.MaxIncrease
			u.Regressed = u.Regressed || c.Regression
			u.Changes = append(u.Changes, c)
		}
	}
	u.Summary = what + ": " + u.verdictWords()
}

// verdictWords: "regression: p99 TPOT +31.0 %, significant (limit +10 %)",
// or "no significant change: p99 TTFT +0.4 %, p99 TPOT -1.2 %".
func (u *Upgrade) verdictWords() string {
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
