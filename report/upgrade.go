package report

import "fmt"

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
