package web

import (
	"bytes"
	"html"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/stats"
)

// A sweep's page draws the QPS–latency curves (TTFT, TPOT) with the SLO
// line and the knee, the frontier, and lists every step by offered rate
// with the knee, capacity and cost.
func TestReportPageDrawsTheSweepCurve(t *testing.T) {
	r := recordedReport(t)
	f := func(v float64) *float64 { return &v }
	step := func(rate, ttft, tpot, tps float64, passed, bisect bool) report.SweepStep {
		sum := func(v float64) stats.Summary {
			return stats.Summary{Count: 50, P50: v, P90: 1.5 * v, P99: 2 * v, Max: 3 * v}
		}
		return report.SweepStep{Rate: rate, AchievedRate: f(rate), GoodputRatio: f(0.98), TTFTP99: f(2 * ttft), Passed: passed, Bisect: bisect,
			Good: 49, Judged: 50, GoodputLower: f(0.895), GoodputUpper: f(0.996),
			Latency:    map[string]stats.Summary{"ttft": sum(ttft), "tpot": sum(tpot), "itl": sum(tpot), "e2e": sum(10 * tpot)},
			Throughput: report.Throughput{OutputTokens: f(tps)}, Cost: report.PriceAt(5, f(tps), f(2*tps))}
	}
	// Bisecting steps ran last; the table lists them by rate.
	r.Sweep = []report.SweepStep{step(4, 0.02, 0.02, 80, true, false), step(8, 0.03, 0.021, 160, true, false), step(12, 0.9, 0.03, 190, false, false), step(10, 0.05, 0.022, 180, true, true)}
	plan := report.SizeFleet(config.Capacity{TargetRate: 100, Headroom: 0.2}, 10, 0, false, f(180), 2)
	r.MaxRateUnderSLO = f(10)
	r.Knee = &report.Knee{TargetRatio: 0.9, Passing: f(10), Failing: f(12), Resolution: 1, Objectives: map[string]float64{"ttft": 0.1}, Capacity: &plan, Cost: r.Sweep[3].Cost}
	page := render(t, r)
	wantAll(t, "a sweep's page", page,
		`<svg class="chart curve curve-ttft"`, `<svg class="chart curve curve-tpot"`, `<svg class="chart frontier"`,
		"SLO 100 ms", "knee 10 req/s", "QPS–latency curve",
		"max rate under SLO: in [10, 12)/s, bisected to 1/s", "capacity: instances 12, GPUs 24 (2 per instance)",
		"cost: 7.716 per million output tokens",
		"held the SLO (bisect), the knee", "10.00 req/s, below 12.00 req/s")
	rows := page[strings.Index(page, `<table class="sweep">`):]
	if a, b, c := strings.Index(rows, "8 req/s"), strings.Index(rows, "10 req/s"), strings.Index(rows, "12 req/s"); !(a < b && b < c) {
		t.Errorf("the steps are not by offered rate: 8 at %d, 10 at %d, 12 at %d", a, b, c)
	}
	// 50 samples a step: every p99 is starred as too few, and the note says why.
	if stars := strings.Count(rows[:strings.Index(rows, "</table>")], `title="p99 from 50 samples: too few, needs 368">*</span>`); stars != 4*4 {
		t.Errorf("%d p99 cells starred as too few, want 16 (4 steps, 4 columns)", stars)
	}
	wantAll(t, "the curve's note", page, "* too few samples in the step for that percentile (p99 needs 368)")
	// The TPOT curve has no objective: no SLO line in its legend.
	tpot := page[strings.Index(page, `<svg class="chart curve curve-tpot"`):]
	if tpot = tpot[:strings.Index(tpot, "</svg>")]; strings.Contains(tpot, "SLO ") {
		t.Error("an SLO line on the TPOT curve without a TPOT objective")
	}

	// The bursts page says the knee's bound and the fleet.
	var list bytes.Buffer
	if err := pages.ExecuteTemplate(&list, "bursts.html", []burstRow{{Name: r.Burst, Latest: r, Badge: burstVerdict(r)}}); err != nil {
		t.Fatal(err)
	}
	wantAll(t, "the bursts page", html.UnescapeString(list.String()), "max rate under SLO 10.00 req/s, below 12.00 req/s · 12 instances for 100 req/s")
}
