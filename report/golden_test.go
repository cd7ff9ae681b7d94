package report_test

import (
	"context"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/burst"
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/reporttest"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/sim"
)

var (
	update = flag.Bool("update", false, "rewrite testdata/report.golden.json from the recorded runs")
	record = flag.Bool("record", false, "run the golden bursts against the simulated engine again, rewrite testdata/run-*.json and the golden report; check the numbers before committing")
)

// observed keeps a burst's measured results.
type observed struct {
	mu      sync.Mutex
	results []*prober.Result
}

func (o *observed) Observe(r *prober.Result) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.results = append(o.results, r)
}

// decodeStep is the sim's decode step, whatever the batch.
const decodeStep = 10 * time.Millisecond

// recordRun runs the golden burst against a sim with the given prefill
// cost and 503 rate.
func recordRun(t *testing.T, version string, prefill time.Duration, errorRate float64) reporttest.Recorded {
	srv, _ := testkit.StartSim(t, func(c *sim.Config) {
		c.Version, c.Seed = version, 7
		c.PrefillBase, c.PrefillPerToken, c.DecodeBase, c.DecodePerSeq = prefill, 0, decodeStep, 0
		c.Faults.ErrorRate, c.Faults.ErrorStatus = errorRate, 503
	})
	client, err := prober.NewClient(testkit.Target(srv.URL, config.APICompletions))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	b, s := reporttest.GoldenBurst()
	seen := &observed{}
	rep, err := burst.Runner{Client: client, Observer: seen}.Run(context.Background(), plan.BurstOf(b, s))
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(seen.results, func(a, b *prober.Result) int { return a.Sched.Compare(b.Sched) })
	for _, r := range seen.results {
		if r.Outcome == prober.OutcomeSuccess {
			r.Log = prober.Log{} // the report keeps the timelines of failed requests only
		}
	}
	return reporttest.Recorded{EngineVersion: rep.EngineVersion, Run: report.Run{
		Rate: rep.Rate, Start: rep.Start, End: rep.End, Planned: rep.PlannedRequests, Warmup: rep.WarmupRequests,
		AllOutputTokens: rep.AllOutputTokens, Results: seen.results, Aborted: rep.Aborted, AbortReason: rep.AbortReason,
		Runtime: rep.ErrorBound.Runtime,
	}}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The golden report is the upgraded engine's burst judged against the one
// before the upgrade, both measured against the simulated engine. Besides
// the bytes, the test spells out the facts a reader checks in it.
func TestReportGolden(t *testing.T) {
	if *record {
		for _, u := range reporttest.Upgrade {
			writeJSON(t, filepath.Join("testdata", u.File), recordRun(t, u.Version, u.Prefill, u.ErrorRate))
		}
	}
	before, after := reporttest.Fixture(t, reporttest.Upgrade[0].File), reporttest.Fixture(t, reporttest.Upgrade[1].File)
	b, s := reporttest.GoldenBurst()
	meta := func(engineVersion string) report.Meta {
		return report.Meta{Model: "m", Engine: "llmprobe-sim", EngineVersion: engineVersion, Version: "test", Host: "host", Scenarios: []config.Scenario{s}}
	}
	prev := report.Build(b, before.Run, meta(before.EngineVersion))
	report.Judge(prev, nil, b.MaxRegression)
	rep := report.Build(b, after.Run, meta(after.EngineVersion))
	report.Judge(rep, prev, b.MaxRegression)

	got, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "report.golden.json")
	if *update || *record {
		writeJSON(t, golden, rep)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./report -run ReportGolden -update)", err)
	}
	if string(want) != string(got)+"\n" {
		t.Errorf("report differs from %s (run with -update after checking the change):\n%s", golden, got)
	}

	for _, tc := range []struct {
		name    string
		rep     *report.Report
		run     report.Run
		prefill time.Duration
	}{{"before", prev, before.Run, reporttest.Upgrade[0].Prefill}, {"after", rep, after.Run, reporttest.Upgrade[1].Prefill}} {
		r := tc.rep
		if r.PlannedRequests != 20 || r.Requests != 20 || r.WarmupRequests != 2 || r.Aborted {
			t.Errorf("%s: planned %d, measured %d, warmup %d, aborted %v", tc.name, r.PlannedRequests, r.Requests, r.WarmupRequests, r.Aborted)
		}
		// Every token counted: the measured successes' 5 each, plus the warmup's.
		succ := r.Outcomes[prober.OutcomeSuccess]
		if extra := r.AllOutputTokens - 5*succ; extra < 0 || extra > 5*r.WarmupRequests || extra%5 != 0 {
			t.Errorf("%s: all_output_tokens %d beside %d successes of 5 tokens and %d warmup", tc.name, r.AllOutputTokens, succ, r.WarmupRequests)
		}
		for _, res := range tc.run.Results {
			if res.Outcome != prober.OutcomeSuccess {
				continue
			}
			var sum time.Duration
			for _, d := range res.ITL {
				sum += d
			}
			// The stream ends with the usage chunk and [DONE] just after the last token.
			if res.OutputTokens != 5 || len(res.ITL) != 4 || res.E2E-res.TTFT < sum || res.E2E-res.TTFT-sum > 5*time.Millisecond {
				t.Errorf("%s: a request with %d tokens, %d ITL samples summing to %s, E2E-TTFT %s", tc.name, res.OutputTokens, len(res.ITL), sum, res.E2E-res.TTFT)
			}
			// The first token comes after one prefill step at the least.
			if res.TTFT < tc.prefill {
				t.Errorf("%s: TTFT %s under the %s prefill", tc.name, res.TTFT, tc.prefill)
			}
			// Each token is one engine step: a decode step of 10 ms, or one
			// that also admitted a new request and paid its prefill.
			for _, d := range res.ITL {
				if (d-decodeStep).Abs() > 2*time.Millisecond && (d-decodeStep-tc.prefill).Abs() > 2*time.Millisecond {
					t.Errorf("%s: an inter-token gap of %s is neither a decode step nor a decode step with a prefill", tc.name, d)
				}
			}
		}
		if r.Goodput.Ratio == nil || *r.Goodput.Ratio > float64(succ)/20 {
			t.Errorf("%s: goodput ratio %v above the success ratio", tc.name, r.Goodput.Ratio)
		}
	}
	if !prev.Passed || prev.Outcomes[prober.OutcomeSuccess] != 20 {
		t.Errorf("before the upgrade: passed %v, outcomes %v", prev.Passed, prev.Outcomes)
	}
	if d := rep.Latency["ttft"].P50 - prev.Latency["ttft"].P50; d < 0.015 {
		t.Errorf("TTFT p50 rose %.1f ms with 20 ms more prefill", 1000*d)
	}
	reg := rep.Regression
	if reg == nil || !reg.EngineVersionChanged || reg.PreviousEngineVersion != "0.11.0" || rep.Passed {
		t.Fatalf("regression %+v, passed %v: want the upgrade seen and the burst failed", reg, rep.Passed)
	}
	for _, m := range reg.Metrics {
		if m.Metric == "ttft" && m.Quantile == "p99" && (m.Ratio == nil || *m.Ratio < 1.2 || !m.Significant || m.PValue == nil || *m.PValue >= 0.05 || math.IsNaN(*m.Ratio)) {
			t.Errorf("ttft p99 %+v: want a significant rise past 20%%", m)
		}
	}
	if rep.Outcomes[prober.OutcomeRejected] == 0 || *rep.Goodput.Ratio >= 1 {
		t.Errorf("after the upgrade: outcomes %v, goodput %.2f: the shed requests are missing", rep.Outcomes, *rep.Goodput.Ratio)
	}
	// Every planned request is accounted for, and the failure says why.
	if len(rep.Failures) != 1 || rep.Failures[0].Reason != "http_status" || rep.Failures[0].Status != 503 || len(rep.FailedSamples) != 1 || len(rep.FailedSamples[0].Log) == 0 {
		t.Errorf("failures %+v, samples %+v", rep.Failures, rep.FailedSamples)
	}
}
