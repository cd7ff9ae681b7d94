package report_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/internal/reporttest"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/stats"
)

// A run overridden on the command line is no baseline for a configured
// run, nor the other way round.
func TestOverriddenRunsAreNotCompared(t *testing.T) {
	before, _ := reporttest.GoldenPair(t)
	b, s := reporttest.GoldenBurst()
	fa := reporttest.Fixture(t, "run-after.json")
	rep := report.Build(b, fa.Run, report.Meta{Model: "m", Scenarios: []config.Scenario{s}})
	rep.Overrides = []string{"--rate=50"}
	report.Judge(rep, before, b.MaxRegression)
	if rep.Regression != nil || !strings.Contains(rep.RegressionSkipped, `overrides "", this run "--rate=50"`) {
		t.Errorf("regression %+v, skipped %q", rep.Regression, rep.RegressionSkipped)
	}
}

// A repeated burst is compared with a repeated baseline run by run: the
// means of the runs' figures, Welch's test on them.
func TestRepeatedRunsCompareRunLevelFigures(t *testing.T) {
	runs := func(tpot ...float64) *report.Report {
		var out []*report.Report
		for i, v := range tpot {
			xs := []float64{v * 0.9, v, v * 1.1}
			out = append(out, &report.Report{ID: fmt.Sprintf("b-%v-%d", tpot[0], i), Burst: "b", Requests: 3,
				Latency: map[string]stats.Summary{"tpot": stats.Summarize(xs)}})
		}
		return report.CombineRuns(out)
	}
	gate := []config.MaxRegression{{Metric: "tpot", Quantile: "p50", MaxIncrease: 0.1, Significant: true}}
	for _, tc := range []struct {
		name      string
		candidate *report.Report
		pass      bool
	}{
		{"40% slower", runs(0.0140, 0.0141, 0.0139), false},
		{"the same", runs(0.0100, 0.0101, 0.0099), true},
	} {
		base := runs(0.0100, 0.0102, 0.0098)
		report.Judge(tc.candidate, base, gate)
		g := tc.candidate.Gates[len(tc.candidate.Gates)-1]
		if g.Passed != tc.pass || !strings.Contains(g.Detail, "mean of 3 runs") || !strings.Contains(g.Detail, "run-level Welch p") {
			t.Errorf("%s: gate %+v, want passed %v by run-level figures", tc.name, g, tc.pass)
		}
	}
}

// llmprobe's own delay only adds: a pass holds with what it added; a
// failure is inconclusive when the misses that fail it are within that
// delay request by request, and failed when they are not (however
// saturated the client) or the answers failed their checks; a clean run's
// verdict has no caveat.
func TestVerdictCarriesItsCaveat(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		name      string
		passed    bool
		saturated bool
		ownDelay  int
		word      decide.Verdict
		reason    string
	}{
		{"clean pass", true, false, 0, decide.Passed, "1 gate held"},
		{"saturated pass", true, true, 0, decide.Passed, "llmprobe added up to 30.0ms; the target is at least this fast"},
		{"clean failure", false, false, 0, decide.Failed, "slo_ttft 50.0% < 99%"},
		{"saturated, certain misses", false, true, 0, decide.Failed, "slo_ttft 50.0% < 99%"},
		{"misses within the own delay", false, true, 5, decide.Inconclusive, "slo_ttft 50.0% < 99%: within llmprobe's own delay (up to 30.0ms), which may be the whole miss, not the target's"},
		// No delay of the client's makes an answer fail its checks.
		{"answers failed", false, true, 5, decide.Failed, "slo_ttft 50.0% < 99%, slo_quality 50.0% < 99%"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			share := 0.5
			if tc.passed {
				share = 1
			}
			gates := []decide.Gate{{Name: "slo_ttft", Threshold: 0.99, Value: &share, Passed: tc.passed, OwnDelay: tc.ownDelay}}
			if strings.Contains(tc.name, "answers") {
				gates = append(gates, decide.Gate{Name: "slo_quality", Threshold: 0.99, Value: &share})
			}
			r := &report.Report{Requests: 10, ClientSaturated: tc.saturated,
				ErrorBound: &stats.ErrorBound{P99: f(0.02), Max: f(0.03), Limit: 0.01}, Gates: gates}
			report.Judge(r, nil, nil)
			if r.Verdict != tc.word || r.VerdictReason != tc.reason {
				t.Errorf("%q: %q, want %q: %q", r.Verdict, r.VerdictReason, tc.word, tc.reason)
			}
		})
	}
}

// The regression texts: latencies in ms as everywhere else, the change
// signed, a skipped gate's reason without a second "skipped", and a
// baseline of other requests named by scenario and field, not as JSON.
func TestRegressionTexts(t *testing.T) {
	before, after := reporttest.GoldenPair(t)
	g := after.Gates[len(after.Gates)-1]
	if want := regexp.MustCompile(`^ttft p50 \d+\.\dms vs \d+\.\dms in ` + before.ID + ` \(\+\d+\.\d%, limit \+20\.0%; Mann–Whitney p=\S+, significant\); engine 0\.11\.0 → 0\.12\.0$`); !want.MatchString(g.Detail) {
		t.Errorf("regression gate: %q, want it to match %s", g.Detail, want)
	}

	// A p99 of 20 requests is shown, never gated: its interval would not
	// even bound it.
	b, s := reporttest.GoldenBurst()
	fa := reporttest.Fixture(t, "run-after.json")
	tail := []config.MaxRegression{{Metric: "ttft", Quantile: "p99", MaxIncrease: 0.2, Significant: true}}
	p99 := report.Build(b, fa.Run, report.Meta{Model: "m", EngineVersion: "0.12.0", Scenarios: []config.Scenario{s}})
	report.Judge(p99, before, tail)
	if g := p99.Gates[len(p99.Gates)-1]; !g.Skipped || !g.Passed || g.Name != "regression_ttft_p99" ||
		!regexp.MustCompile(`^not gated: ttft p99 \d+\.\dms vs \d+\.\dms in \S+; p99 from 19 samples: too few, needs 368; the baseline's p99 from 20 samples: too few, needs 368`).MatchString(g.Detail) {
		t.Errorf("a p99 of 19 samples: %+v", g)
	}

	alone := report.Build(b, fa.Run, report.Meta{Model: "m", Scenarios: []config.Scenario{s}})
	report.Judge(alone, nil, b.MaxRegression)
	if g := alone.Gates[len(alone.Gates)-1]; !g.Skipped || g.Detail != "no previous report of burst b" {
		t.Errorf("without a previous report: %+v", g)
	}

	longer := s
	longer.PromptTokens.Value *= 2
	other := report.Build(b, fa.Run, report.Meta{Model: "m", Scenarios: []config.Scenario{longer}})
	report.Judge(other, before, b.MaxRegression)
	if want := "is not comparable: scenarios' requests differ: s (prompt_tokens)"; !strings.HasSuffix(other.RegressionSkipped, want) || strings.Contains(other.RegressionSkipped, "{") {
		t.Errorf("a baseline of other lengths: %q, want it to end %q", other.RegressionSkipped, want)
	}
}
