package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/decide"
)

// upgradeMetrics are the metric and quantile pairs an upgrade verdict
// judges: TTFT and TPOT, median and tail.
var upgradeMetrics = [][2]string{{"ttft", "p50"}, {"ttft", "p99"}, {"tpot", "p50"}, {"tpot", "p99"}}

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
// none, RegressionSkipped says why): each figure by decide.Regression, on
// the evidence a max_regression gate with the upgrade's max_increase would
// have (its spread between runs from history or assumed).
func judgeUpgrade(r, prev *Report, history []*Report) {
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
	var regressed []bool
	for _, mq := range upgradeMetrics {
		m, q := mq[0], mq[1]
		c := UpgradeChange{Metric: m, Quantile: q, Previous: prev.Latency[m].Measured(q), Current: r.Latency[m].Measured(q)}
		for _, rm := range r.Regression.Metrics {
			if rm.Metric == m && rm.Quantile == q {
				c.PValue, c.Significant = rm.PValue, rm.Significant
			}
		}
		switch {
		case c.Previous == nil || c.Current == nil || *c.Previous <= 0:
		case r.Latency[m].IsTooFew(q) || prev.Latency[m].IsTooFew(q):
			change := *c.Current / *c.Previous - 1
			c.Change, c.Verdict = &change, decide.NotGated()
		default:
			mr := config.MaxRegression{Metric: m, Quantile: q, MaxIncrease: u.MaxIncrease}
			e := latencyGauge(m, q).evidence(r, prev, history, mr)
			v := decide.Regression(e.Evidence, mr.Limit())
			change, lo, hi := math.Expm1(e.Effect), math.Expm1(v.Lo), math.Expm1(v.Hi)
			c.Change, c.AtLeast, c.AtMost, c.Spread, c.Verdict = &change, &lo, &hi, e.spread, v.Verdict
			c.Regression = decide.UpgradeRegression(v)
		}
		regressed = append(regressed, c.Regression)
		u.Changes = append(u.Changes, c)
	}
	u.Regressed = decide.UpgradeRegressed(regressed...)
	u.Summary = what + ": " + verdictWords(u)
}

// verdictWords says each verdict's figures, the worst first: "regression:
// p50 TPOT +30 % (95 % interval +14 … +48 %) (limit +10 %)", "not enough
// evidence: …", "no regression beyond +10 %: …", "improvement: …"; a tail
// too few samples bound is named, not judged.
func verdictWords(u *Upgrade) string {
	limit := fmt.Sprintf("+%s %%", pct(u.MaxIncrease))
	by := map[decide.Verdict][]string{}
	var tooFew []string
	for _, c := range u.Changes {
		name := c.Quantile + " " + strings.ToUpper(c.Metric)
		switch {
		case c.Change == nil:
			by[decide.NotApplicable] = append(by[decide.NotApplicable], name+" n/a")
		case c.Verdict == decide.TooFew:
			tooFew = append(tooFew, fmt.Sprintf("%s %s %% (too few samples, not judged)", name, signedPct(*c.Change)))
		default:
			by[c.Verdict] = append(by[c.Verdict], fmt.Sprintf("%s %s %% (95 %% interval %s … %s %%)", name, signedPct(*c.Change), signedPct(*c.AtLeast), signedPct(*c.AtMost)))
		}
	}
	var words []string
	if w := by[decide.Worse]; len(w) > 0 {
		words = append(words, fmt.Sprintf("regression: %s (limit %s)", strings.Join(w, "; "), limit))
	}
	if w := by[decide.NotEnough]; len(w) > 0 {
		words = append(words, fmt.Sprintf("not enough evidence: %s, across the limit of %s", strings.Join(w, "; "), limit))
	}
	if w := by[decide.Within]; len(w) > 0 {
		words = append(words, fmt.Sprintf("no regression beyond %s: %s", limit, strings.Join(w, "; ")))
	}
	if w := by[decide.Better]; len(w) > 0 {
		words = append(words, "improvement: "+strings.Join(w, "; "))
	}
	if len(words) == 0 {
		words = append(words, "nothing judged")
	}
	words = append(append(words, tooFew...), by[decide.NotApplicable]...)
	return strings.Join(words, "; ")
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
