package report_test

import (
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/prompt"
	"github.com/llmprobe/llmprobe/report"
)

// The quality gate holds the share of checked answers that passed to the
// strictest quality_ratio, with its Wilson interval; it says "too few"
// where the answers cannot show the target, n/a where none was checked,
// and a failed request counts against goodput, not against the share.
func TestQualityGate(t *testing.T) {
	start := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	run := func(passed, failed, broken int) report.Run {
		var o report.Run
		n := 0
		add := func(res *prober.Result) {
			res.Sched, res.E2E = start.Add(time.Duration(n)*time.Second), 100*time.Millisecond
			o.Add(n, res)
			n++
		}
		total := passed + failed
		for i := range total {
			// The failures spread evenly: answers that fail together would
			// be worth fewer (stats.EffectiveN).
			ok := (i+1)*failed/total == i*failed/total
			add(&prober.Result{Outcome: prober.OutcomeSuccess, Good: ok, Quality: &prober.QualityResult{Passed: ok}})
		}
		for range broken {
			add(&prober.Result{Outcome: prober.OutcomeHTTPError})
		}
		o.Planned = n
		o.Close(start)
		return o
	}
	scenarios := []config.Scenario{
		{Name: "loose", SLO: config.SLO{TargetRatio: 0.99, QualityRatio: 0.9}},
		{Name: "strict", SLO: config.SLO{TargetRatio: 0.99, QualityRatio: 0.95}},
		{Name: "unchecked", SLO: config.SLO{TargetRatio: 0.99}},
	}
	for _, tc := range []struct {
		name                   string
		passed, failed, broken int
		pass                   bool
		detail                 string
	}{
		{"held", 400, 0, 10, true, "100.00% of 400 checked answers passed their checks; the target is 95.00% (the share's 95% Wilson interval: 99.0%–100.0%)"},
		{"missed", 80, 20, 0, false, "80.00% of 100 checked answers passed their checks; the target is 95.00% (the share's 95% Wilson interval: 71.1%–86.7%)"},
		// 97 of 100 may be 91.5 % as well as 99 %: no verdict, and what would give one.
		{"not enough", 97, 3, 0, false, "; not enough evidence: the interval reaches across the target, which about 414 requests at this share would settle"},
		{"too few", 20, 0, 0, false, "; not enough evidence: the interval reaches across the target, which about 73 requests at this share would settle"},
		{"none checked", 0, 0, 5, false, "n/a: no answer was checked (no request succeeded); the target is 95.00%"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := report.Build(config.Burst{Name: "b"}, run(tc.passed, tc.failed, tc.broken), report.Meta{Scenarios: scenarios})
			var g *decide.Gate
			for i := range rep.Gates {
				if rep.Gates[i].Name == "slo_quality" {
					g = &rep.Gates[i]
				}
			}
			if g == nil {
				t.Fatalf("no slo_quality gate among %+v", rep.Gates)
			}
			if g.Passed != tc.pass || g.Threshold != 0.95 || !strings.Contains(g.Detail, tc.detail) {
				t.Errorf("gate %+v, want passed %v at 0.95 with %q", *g, tc.pass, tc.detail)
			}
			if checked := tc.passed + tc.failed; checked == 0 {
				if g.Value != nil {
					t.Errorf("value %v, want n/a", *g.Value)
				}
			} else if g.Value == nil || *g.Value != float64(tc.passed)/float64(checked) || rep.Goodput.PerObjectiveChecked["quality"] != checked {
				t.Errorf("value %v of %d checked, want %d of %d", g.Value, rep.Goodput.PerObjectiveChecked["quality"], tc.passed, checked)
			}
		})
	}
	rep := report.Build(config.Burst{Name: "b"}, run(10, 0, 0), report.Meta{Scenarios: scenarios[2:]})
	for _, g := range rep.Gates {
		if g.Name == "slo_quality" {
			t.Errorf("a burst whose scenarios set no quality_ratio has a quality gate: %+v", g)
		}
	}
}

// Misses that come in runs, as a queue that falls behind makes them, are
// worth fewer independent requests: the share's interval is over what
// they are worth (batch means), the gate says so, and so does goodput's.
func TestSharesOfOneRunAreWorthWhatTheirBatchesShow(t *testing.T) {
	start := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	s := config.Scenario{Name: "s", SLO: config.SLO{TTFT: config.Duration(100 * time.Millisecond), TargetRatio: 0.9}}
	build := func(missed func(i int) bool) *report.Report {
		var o report.Run
		for i := range 400 {
			ttft := 50 * time.Millisecond
			if missed(i) {
				ttft = 200 * time.Millisecond
			}
			res := &prober.Result{Outcome: prober.OutcomeSuccess, Sched: start.Add(time.Duration(i) * 100 * time.Millisecond), OutputChunks: 5,
				TTFT: ttft, E2E: ttft + 40*time.Millisecond, OutputTokens: 5, TokenSource: prober.TokensFromUsage}
			prober.Evaluate(res, s, prompt.Prompt{})
			o.Add(i, res)
		}
		o.Planned = 400
		o.Close(start)
		return report.Build(config.Burst{Name: "b"}, o, report.Meta{Scenarios: []config.Scenario{s}})
	}
	// 20 misses, 5 %: every twentieth request, or two runs of ten.
	even, bursty := build(func(i int) bool { return i%20 == 0 }), build(func(i int) bool { return i%200 < 10 })
	if g := even.Gates[0]; !g.Passed || strings.Contains(g.Detail, "batch means") || even.Goodput.Effective != 0 {
		t.Errorf("even misses: gate %+v, goodput worth %d", g, even.Goodput.Effective)
	}
	g := bursty.Gates[0]
	if g.Passed || !strings.Contains(g.Detail, "independent requests the 400 are worth by batch means") ||
		bursty.Goodput.Effective == 0 || bursty.Goodput.Effective >= 400 || bursty.Goodput.PerObjectiveEffective["ttft"] != bursty.Goodput.Effective {
		t.Errorf("bursty misses: gate %+v, goodput worth %d, ttft's %v", g, bursty.Goodput.Effective, bursty.Goodput.PerObjectiveEffective)
	}
}
