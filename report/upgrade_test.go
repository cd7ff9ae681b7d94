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

func TestStoreLatestFrom(t *testing.T) {
	s := report.NewStore(t.TempDir(), nil)
	for _, r := range []*report.Report{
		reporttest.UpgradeRun("b-20200101T000000Z", "0.11.0", nil, nil),
		reporttest.UpgradeRun("b-20200102T000000Z", "0.11.0", nil, nil),
		reporttest.UpgradeRun("b-20200103T000000Z", "0.12.0", nil, nil),
	} {
		if err := s.Save(r, 10); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.LatestFrom("b", report.Facts{Engine: "vllm", Version: "0.11.0", Model: "m"})
	if err != nil || got == nil || got.ID != "b-20200102T000000Z" {
		t.Errorf("LatestFrom 0.11.0 = %v, %v; want b-20200102T000000Z", got, err)
	}
	if got, err := s.LatestFrom("b", report.Facts{Engine: "vllm", Version: "0.10.0", Model: "m"}); got != nil || err != nil {
		t.Errorf("LatestFrom 0.10.0 = %v, %v; want none", got, err)
	}
}
