package report_test

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/internal/reporttest"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/stats"
	"gonum.org/v1/gonum/stat/distuv"
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
// runs' figures, Welch's interval on their logs against the limit.
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
	gate := []config.MaxRegression{{Metric: "tpot", Quantile: "p50", MaxIncrease: 0.1}}
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
		if g.Passed != tc.pass || g.Undecided || !strings.Contains(g.Detail, "(means of the runs)") || !strings.Contains(g.Detail, "spread from repeat: 3 runs against the baseline's 3 (Welch") {
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
		{"misses within the own delay", false, true, 5, decide.Inconclusive, "slo_ttft 50.0% < 99%: within llmprobe's own delay (up to 30.0ms), which may decide it, not the target"},
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
	if want := regexp.MustCompile(`^ttft p50 \d+\.\dms vs \d+\.\dms in ` + before.ID + `: \+\d+\.\d%, 95% interval \+\d+\.\d% … \+\d+\.\d%, limit \+10%; spread 0\.0% between runs assumed \(the gate's spread; 0 comparable stored runs, 5 needed to read it\), beyond each run's sampling error \(±\d+\.\d%, ±\d+\.\d%\); worse: the interval lies beyond the limit; engine 0\.11\.0 → 0\.12\.0$`); !want.MatchString(g.Detail) {
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

// lognormalRun is a single run of burst b with n TPOT samples about median
// (a spread of 10 % in logs), judged good ratio of goodput.
func lognormalRun(id string, median float64, n int, goodput float64) *report.Report {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = median * math.Exp(0.1*distuv.UnitNormal.Quantile((float64(i)+0.5)/float64(n)))
	}
	return &report.Report{ID: id, Burst: "b", Requests: n, Latency: map[string]stats.Summary{"tpot": stats.Summarize(xs)},
		Goodput: report.Goodput{Ratio: &goodput, Judged: n}}
}

// One run against one run: the spread comes from the burst's stored runs
// where there are enough, else it is assumed, and the verdict says which.
// 40 % slower fails against a named baseline; 8 % says how many runs would
// settle it; the same passes a limit the assumed spread can show.
func TestSingleRunRegressionGates(t *testing.T) {
	gate := func(limit float64) []config.MaxRegression {
		return []config.MaxRegression{{Metric: "tpot", Quantile: "p50", MaxIncrease: limit}}
	}
	var history []*report.Report
	for i, m := range []float64{0.0100, 0.0101, 0.0099, 0.0100, 0.0102, 0.0098} {
		history = append(history, lognormalRun(fmt.Sprintf("b-h%d", i), m, 500, 1))
	}
	for _, tc := range []struct {
		name             string
		median, limit    float64
		history          []*report.Report
		passed, undecide bool
		detail           string
	}{
		{"40% slower", 0.014, 0.1, nil, false, false, "spread 5.0% between runs assumed (the default; spread: sets it; 0 comparable stored runs, 5 needed to read it)"},
		{"8% slower", 0.0108, 0.1, nil, false, true, "runs a side at this spread would settle it (repeat: "},
		{"the same, +20%", 0.0100, 0.2, nil, true, false, "within: the interval lies inside the limit"},
		{"the same, +10%, assumed", 0.0100, 0.1, nil, false, true, "not enough evidence"},
		{"the same, +10%, history", 0.0100, 0.1, history, true, false, "from the burst's last 6 comparable runs"},
		{"40% slower, history", 0.014, 0.1, history, false, false, "worse: the interval lies beyond the limit"},
	} {
		base, run := lognormalRun("b-base", 0.0100, 500, 1), lognormalRun("b-run", tc.median, 500, 1)
		report.JudgeAgainst(run, report.Baseline{Report: base, Named: true, History: tc.history}, gate(tc.limit))
		g := run.Gates[len(run.Gates)-1]
		if g.Passed != tc.passed || g.Undecided != tc.undecide || !strings.Contains(g.Detail, tc.detail) {
			t.Errorf("%s: passed %v undecided %v: %s; want passed %v undecided %v and %q", tc.name, g.Passed, g.Undecided, g.Detail, tc.passed, tc.undecide, tc.detail)
		}
	}
}

// A regression as measured that llmprobe's own delay could have made
// decides nothing: the run is inconclusive, not failed. One larger than
// the delay could add still fails.
func TestRegressionWithinOwnDelay(t *testing.T) {
	gate := []config.MaxRegression{{Metric: "tpot", Quantile: "p50", MaxIncrease: 0.1, Spread: reporttest.F(0)}}
	for _, tc := range []struct {
		name    string
		fastest float64 // the run's p50 without its own delay
		word    decide.Verdict
	}{
		{"all of it could be the delay", 0.0101, decide.Inconclusive},
		{"more than the delay", 0.0130, decide.Failed},
	} {
		base, run := lognormalRun("b-base", 0.0100, 500, 1), lognormalRun("b-run", 0.014, 500, 1)
		run.WithoutOwnDelay = map[string]map[string]float64{"tpot": {"p50": tc.fastest}}
		report.Judge(run, base, gate)
		if g := run.Gates[len(run.Gates)-1]; run.Verdict != tc.word || g.OwnDelayDecides != (tc.word == decide.Inconclusive) {
			t.Errorf("%s: %q (%s), gate %+v", tc.name, run.Verdict, run.VerdictReason, g)
		}
		if want := "regression_tpot_p50 +40.0%, on either side of +10% once llmprobe's own delay is taken off"; tc.word == decide.Inconclusive && !strings.HasPrefix(run.VerdictReason, want) {
			t.Errorf("%s: reason %q, want it to start %q", tc.name, run.VerdictReason, want)
		}
	}
}

// Goodput falling from about 99 % to about 90 % is worse under repeat: on
// both sides, by its 2-point limit; a drop within noise is within it.
func TestGoodputRegressionUnderRepeat(t *testing.T) {
	runs := func(id string, ratios ...float64) *report.Report {
		var out []*report.Report
		for i, g := range ratios {
			out = append(out, lognormalRun(fmt.Sprintf("%s-%d", id, i), 0.01, 200, g))
		}
		return report.CombineRuns(out)
	}
	gate := []config.MaxRegression{{Metric: config.Goodput, MaxDrop: 0.02}}
	for _, tc := range []struct {
		name      string
		candidate *report.Report
		passed    bool
	}{
		{"99% → 90%", runs("c", 0.90, 0.91, 0.895), false},
		{"99% → 99%", runs("s", 0.99, 0.985, 0.995), true},
	} {
		base := runs("b", 0.99, 0.995, 0.985)
		report.Judge(tc.candidate, base, gate)
		g := tc.candidate.Gates[len(tc.candidate.Gates)-1]
		if g.Name != "regression_goodput" || g.Passed != tc.passed || g.Undecided || !strings.Contains(g.Detail, "limit -2.0 pp; spread from repeat") {
			t.Errorf("%s: %+v", tc.name, g)
		}
	}
}
