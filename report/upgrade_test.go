package report

import (
	"strings"
	"testing"
)

// upgradeRun is a report of burst "b" on engine e version v whose TTFT
// samples are ttft and TPOT samples tpot.
func upgradeRun(id, v string, ttft, tpot []float64) *Report {
	r := &Report{ID: id, Burst: "b", Target: "t", Model: "m", Engine: "vllm", EngineVersion: v, Requests: len(ttft),
		Latency: map[string]Summary{}, Samples: map[string][]float64{"ttft": ttft, "tpot": tpot}}
	r.Latency["ttft"] = Summarize(append([]float64(nil), ttft...))
	r.Latency["tpot"] = Summarize(append([]float64(nil), tpot...))
	return r
}

func spread(n int, base, step float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = base + float64(i%10)*step
	}
	return out
}

func TestUpgradeVerdict(t *testing.T) {
	prev := upgradeRun("b-1", "0.11.0", spread(40, 0.05, 0.001), spread(40, 0.010, 0.0001))
	for _, c := range []struct {
		name       string
		tpotScale  float64
		outlier    float64 // one request's TPOT this much slower
		regressed  bool
		want       string
		prevReport *Report
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
			tpot := spread(40, 0.010*c.tpotScale, 0.0001*c.tpotScale)
			if c.outlier > 0 {
				tpot[0] = 0.0109 * c.outlier
			}
			r := upgradeRun("b-2", "0.12.0", spread(40, 0.05, 0.001), tpot)
			r.ExpectUpgrade(Facts{Engine: "vllm", Version: "0.11.0", Model: "m"}, 0.1)
			if c.prevReport == nil {
				r.RegressionSkipped = "no report of burst b from vllm 0.11.0"
			}
			r.Judge(c.prevReport)
			u := r.Upgrade
			if u.Regressed != c.regressed || !strings.Contains(u.Summary, c.want) {
				t.Errorf("regressed %v, summary\n  %s\nwant regressed %v, summary containing\n  %s", u.Regressed, u.Summary, c.regressed, c.want)
			}
			if c.prevReport != nil && u.BaselineID != "b-1" {
				t.Errorf("baseline %q, want b-1", u.BaselineID)
			}
			var text, mdown strings.Builder
			r.WriteText(&text)
			if err := r.WriteMarkdown(&mdown); err != nil {
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
	prev := upgradeRun("b-1", "0.11.0", spread(40, 0.05, 0.001), spread(40, 0.010, 0.0001))
	r := upgradeRun("b-2", "0.11.0", spread(40, 0.05, 0.001), spread(40, 0.010, 0.0001))
	r.Model = "m2"
	r.ExpectUpgrade(Facts{Engine: "vllm", Version: "0.11.0", Model: "m"}, 0.1)
	r.Judge(prev)
	if r.Regression == nil || !strings.HasPrefix(r.Upgrade.Summary, "model m → m2: no significant change") {
		t.Errorf("regression %v, skipped %q, summary %q", r.Regression, r.RegressionSkipped, r.Upgrade.Summary)
	}
	// An ordinary run still refuses a baseline of another model.
	r = upgradeRun("b-3", "0.11.0", nil, nil)
	r.Model = "m2"
	r.Judge(prev)
	if r.Regression != nil || !strings.Contains(r.RegressionSkipped, `model "m"`) {
		t.Errorf("a baseline of another model was used: %q", r.RegressionSkipped)
	}
}

func TestStoreLatestFrom(t *testing.T) {
	s := NewStore(t.TempDir(), nil)
	for _, r := range []*Report{
		upgradeRun("b-20200101T000000Z", "0.11.0", nil, nil),
		upgradeRun("b-20200102T000000Z", "0.11.0", nil, nil),
		upgradeRun("b-20200103T000000Z", "0.12.0", nil, nil),
	} {
		if err := s.Save(r, 10); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.LatestFrom("b", Facts{Engine: "vllm", Version: "0.11.0", Model: "m"})
	if err != nil || got == nil || got.ID != "b-20200102T000000Z" {
		t.Errorf("LatestFrom 0.11.0 = %v, %v; want b-20200102T000000Z", got, err)
	}
	if got, err := s.LatestFrom("b", Facts{Engine: "vllm", Version: "0.10.0", Model: "m"}); got != nil || err != nil {
		t.Errorf("LatestFrom 0.10.0 = %v, %v; want none", got, err)
	}
}
