package report_test

import (
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/internal/reporttest"
)

// A model change is the upgrade: the baseline of the old model is compared with.
func TestUpgradeAcrossModelChange(t *testing.T) {
	prev := reporttest.UpgradeRun("b-1", "0.11.0", reporttest.Spread(40, 0.05, 0.001), reporttest.Spread(40, 0.010, 0.0001))
	r := reporttest.UpgradeRun("b-2", "0.11.0", reporttest.Spread(40, 0.05, 0.001), reporttest.Spread(40, 0.010, 0.0001))
	r.Model = "m2"
	r.ExpectUpgrade(report.Facts{Engine: "vllm", Version: "0.11.0", Model: "m"}, 0.1)
	r.Judge(prev)
	if r.Regression == nil || !strings.HasPrefix(r.Upgrade.Summary, "model m → m2: no significant change") {
		t.Errorf("regression %v, skipped %q, summary %q", r.Regression, r.RegressionSkipped, r.Upgrade.Summary)
	}
	// An ordinary run still refuses a baseline of another model.
	r = reporttest.UpgradeRun("b-3", "0.11.0", nil, nil)
	r.Model = "m2"
	r.Judge(prev)
	if r.Regression != nil || !strings.Contains(r.RegressionSkipped, `model "m"`) {
		t.Errorf("a baseline of another model was used: %q", r.RegressionSkipped)
	}
}
