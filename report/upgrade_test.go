package report_test

import (
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/reporttest"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/render"
)

// An upgrade's figures are judged as a max_regression gate with its
// max_increase would judge them: by their interval, with the spread
// between runs assumed where the burst keeps too few runs; a p99 of 40
// samples is named, never judged.
func TestUpgradeVerdict(t *testing.T) {
	prev := reporttest.UpgradeRun("b-1", "0.11.0", reporttest.Spread(40, 0.05, 0.001), reporttest.Spread(40, 0.010, 0.0001))
	for _, c := range []struct {
		name       string
		tpotScale  float64
		outlier    float64 // one request's TPOT this much slower
		limit      float64
		regressed  bool
		want       []string
		prevReport *report.Report
	}{
		{"30 % slower decode", 1.3, 0, 0.1, true, []string{"engine vllm 0.11.0 → 0.12.0: regression: p50 TPOT +30 % (95 % interval +", "(limit +10 %); not enough evidence: p50 TTFT +0 % (95 % interval -", "p99 TTFT +0 % (too few samples, not judged); p99 TPOT +30 % (too few samples, not judged)"}, prev},
		// One run against one, at the assumed 5 % spread: ±15 % reaches past
		// a 10 % limit, not past 30 %.
		{"the same", 1, 0, 0.1, false, []string{"engine vllm 0.11.0 → 0.12.0: not enough evidence: p50 TTFT +0 % (95 % interval -", "across the limit of +10 %"}, prev},
		{"the same, limit +30 %", 1, 0, 0.3, false, []string{"engine vllm 0.11.0 → 0.12.0: no regression beyond +30 %: p50 TTFT +0 % (95 % interval -"}, prev},
		{"faster", 0.7, 0, 0.2, false, []string{"no regression beyond +20 %: p50 TTFT +0 % (95 % interval -", "; improvement: p50 TPOT -30 % (95 % interval -"}, prev},
		{"3 % slower", 1.03, 0, 0.1, false, []string{"not enough evidence: ", "p50 TPOT +3 % (95 % interval -"}, prev},
		// A small real shift and one slow request: the p99 of 40 samples
		// grew past the limit, and is not judged.
		{"3 % slower and one slow request", 1.03, 1.5, 0.3, false, []string{"no regression beyond +30 %", "p99 TPOT +31.7 % (too few samples, not judged)"}, prev},
		{"no baseline", 1.3, 0, 0.1, false, []string{"engine vllm 0.11.0 → 0.12.0: no verdict, no report of burst b from vllm 0.11.0"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			tpot := reporttest.Spread(40, 0.010*c.tpotScale, 0.0001*c.tpotScale)
			if c.outlier > 0 {
				tpot[0] = 0.0109 * c.outlier
			}
			r := reporttest.UpgradeRun("b-2", "0.12.0", reporttest.Spread(40, 0.05, 0.001), tpot)
			r.ExpectUpgrade(report.Facts{Engine: "vllm", Version: "0.11.0", Model: "m"}, c.limit)
			if c.prevReport == nil {
				r.RegressionSkipped = "no report of burst b from vllm 0.11.0"
			}
			report.Judge(r, c.prevReport, nil)
			u := r.Upgrade
			if u.Regressed != c.regressed {
				t.Errorf("regressed %v, want %v: %s", u.Regressed, c.regressed, u.Summary)
			}
			for _, w := range c.want {
				if !strings.Contains(u.Summary, w) {
					t.Errorf("summary\n  %s\nwant it to contain\n  %s", u.Summary, w)
				}
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
	if r.Regression == nil || !strings.HasPrefix(r.Upgrade.Summary, "model m → m2: not enough evidence") {
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
