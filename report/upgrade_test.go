package report_test

import (
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/reporttest"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/render"
)

func TestUpgradeVerdict(t *testing.T) {
	prev := reporttest.UpgradeRun("b-1", "0.11.0", reporttest.Spread(40, 0.05, 0.001), reporttest.Spread(40, 0.010, 0.0001))
	for _, c := range []struct {
		name       string
		tpotScale  float64
		outlier    float64 // one request's TPOT this much slower
		regressed  bool
		want       string
		prevReport *report.Report
	}{
		{"30 % slower decode", 1.3, 0, true, "engine vllm 0.11.0 → 0.12.0: regression: p50 TPOT +30 % (at least +27.5 % at 95 % confidence), significant; p99 TPOT +30 % (at least +29.5 % at 95 % confidence), significant (limit +10 %)", prev},
		{"the same", 1, 0, false, "engine vllm 0.11.0 → 0.12.0: no significant change: p99 TTFT +0 %, p99 TPOT +0 %", prev},
		{"faster", 0.7, 0, false, "engine vllm 0.11.0 → 0.12.0: improvement: p50 TPOT -30 %, significant; p99 TPOT -30 %, significant", prev},
		{"3 % slower, significant but small", 1.03, 0, false, "no regression beyond +10 %: p50 TPOT +3 %, significant", prev},
		// A small real shift and one slow request: p99 grew past the limit, but
		// the bootstrap bound says the tail did not.
		{"3 % slower and one slow request", 1.03, 1.5, false, "p99 TPOT +31.7 % but only +3 % at 95 % confidence, significant", prev},
		{"no baseline", 1.3, 0, false, "engine vllm 0.11.0 → 0.12.0: no verdict, no report of burst b from vllm 0.11.0", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			tpot := reporttest.Spread(40, 0.010*c.tpotScale, 0.0001*c.tpotScale)
			if c.outlier > 0 {
				tpot[0] = 0.0109 * c.outlier
			}
			r := reporttest.UpgradeRun("b-2", "0.12.0", reporttest.Spread(40, 0.05, 0.001), tpot)
			r.ExpectUpgrade(report.Facts{Engine: "vllm", Version: "0.11.0", Model: "m"}, 0.1)
			if c.prevReport == nil {
				r.RegressionSkipped = "no report of burst b from vllm 0.11.0"
			}
			report.Judge(r, c.prevReport, nil)
			u := r.Upgrade
			if u.Regressed != c.regressed || !strings.Contains(u.Summary, c.want) {
				t.Errorf("regressed %v, summary\n  %s\nwant regressed %v, summary containing\n  %s", u.Regressed, u.Summary, c.regressed, c.want)
			}
			if c.prevReport != nil && u.BaselineID != "b-1" {
				t.Errorf("baseline %q, want b-1", u.BaselineID)
			}
			var text, mdown strings.Builder
			render.Text(&text, r)
			if err := render.Markdown(&mdown, r); err != nil {
				t.Fatal(err)
			}
			for _, out := range []string{text.String(), mdown.String()} {
				if !strings.Contains(out, u.Summary) {
					t.Errorf("the upgrade summary is missing from:\n%s", out)
				}
			}
		})
	}
}

// A model change is the upgrade: the baseline of the old model is compared with.
func TestUpgradeAcrossModelChange(t *testing.T) {
	prev := reporttest.UpgradeRun("b-1", "0.11.0", reporttest.Spread(40, 0.05, 0.001), reporttest.Spread(40, 0.010, 0.0001))
	r := reporttest.UpgradeRun("b-2", "0.11.0", reporttest.Spread(40, 0.05, 0.001), reporttest.Spread(40, 0.010, 0.0001))
	r.Model = "m2"
	r.ExpectUpgrade(report.Facts{Engine: "vllm", Version: "0.11.0", Model: "m"}, 0.1)
	report.Judge(r, prev, nil)
	if r.Regression == nil || !strings.HasPrefix(r.Upgrade.Summary, "model m → m2: no significant change") {
		t.Errorf("regression %v, skipped %q, summary %q", r.Regression, r.RegressionSkipped, r.Upgrade.Summary)
	}
	// An ordinary run still refuses a baseline of another model.
	r = reporttest.UpgradeRun("b-3", "0.11.0", nil, nil)
	r.Model = "m2"
	report.Judge(r, prev, nil)
	if r.Regression != nil || !strings.Contains(r.RegressionSkipped, `model "m"`) {
		t.Errorf("a baseline of another model was used: %q", r.RegressionSkipped)
	}
}
