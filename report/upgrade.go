package report

import (
	"fmt"

	"github.com/llmprobe/llmprobe/decide"
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
	// Regressed is set when a quantile's change is shown beyond
	// MaxIncrease: its 95 % interval lies above it.
	Regressed bool            `json:"regressed"`
	Changes   []UpgradeChange `json:"changes"`
	// Summary says it in one line: "engine vllm 0.11.0 → 0.12.0:
	// regression: p50 TPOT +30 % (95 % interval +14 … +48 %) (limit +10 %)".
	Summary string `json:"summary"`
}

// UpgradeChange is one quantile's change over the change of engine; a side
// without samples is null, and so is the change.
type UpgradeChange struct {
	Metric   string   `json:"metric"`
	Quantile string   `json:"quantile"`
	Previous *float64 `json:"previous"`
	Current  *float64 `json:"current"`
	// Change is relative: 0.31 is +31 %. AtLeast and AtMost are its 95 %
	// interval, with the spread between runs of a max_regression gate
	// (Spread says which); null for a percentile too few samples bound.
	Change  *float64 `json:"change"`
	AtLeast *float64 `json:"at_least"`
	AtMost  *float64 `json:"at_most,omitempty"`
	Spread  string   `json:"spread,omitempty"`
	// Verdict is decide.Regression's against the upgrade's max_increase:
	// worse, within, better, not enough evidence, or too few (not judged).
	Verdict decide.Verdict `json:"verdict,omitempty"`
	// PValue is the Mann-Whitney test's on the metric's samples, shown,
	// not judged; Significant when it is under 0.05.
	PValue      *float64 `json:"p_value"`
	Significant bool     `json:"significant"`
	// Regression: the interval lies beyond MaxIncrease (Verdict worse).
	Regression bool `json:"regression"`
}

// ExpectUpgrade marks the report as the run of an engine change from the
// given facts; verdict.Judge then gives the upgrade verdict against its prev,
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
