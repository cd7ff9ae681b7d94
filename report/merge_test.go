package report_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/burst"
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/internal/reporttest"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/render"
	"github.com/llmprobe/llmprobe/shard"
	"github.com/llmprobe/llmprobe/stats"
)

// splitRun deals run's requests to n shards round robin by their place in
// the plan, as burst.ShardPlan does, and gives each shard's run what the
// runner would: its requests with their indexes, its span, its share of the
// planned, warmup and not-sent counts.
func splitRun(run report.Run, n int, origin time.Time) []report.Run {
	shards := make([]report.Run, n)
	for i := range shards {
		shards[i] = report.Run{Rate: run.Rate, NotSent: map[string]int{}, Shard: shard.Shard{Index: i, Count: n}, Origin: origin}
	}
	for i, res := range run.Results {
		shards[i%n].Add(i, res)
	}
	unsent := 0
	for reason, c := range run.NotSent {
		for range c {
			shards[(len(run.Results)+unsent)%n].NotSent[reason]++
			unsent++
		}
	}
	for i := range shards {
		s := &shards[i]
		s.Planned = len(s.Results)
		for _, c := range s.NotSent {
			s.Planned += c
		}
		s.Warmup = run.Warmup / n
		s.AllOutputTokens = run.AllOutputTokens / n
		s.Close(origin)
	}
	shards[0].Warmup += run.Warmup % n
	shards[0].AllOutputTokens += run.AllOutputTokens % n
	return shards
}

// shardParts builds and judges each shard's report, and reads it back from
// JSON as `llmprobe report merge` does.
func shardParts(t *testing.T, b config.Burst, meta report.Meta, runs []report.Run) []report.ShardReport {
	t.Helper()
	parts := make([]report.ShardReport, len(runs))
	for i, run := range runs {
		rep := report.Build(b, run, meta)
		report.Judge(rep, nil, b.MaxRegression)
		raw, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		var back report.Report
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		parts[i] = report.ShardReport{Name: fmt.Sprintf("shard-%d.json", i), Report: &back}
	}
	return parts
}

// mergedFigures are the figures a merged report must share exactly with the
// single-process report of the same requests.
func mergedFigures(r *report.Report) map[string]any {
	slo := []decide.Gate{}
	for _, g := range r.Gates {
		if strings.HasPrefix(g.Name, "slo_") {
			slo = append(slo, g)
		}
	}
	return map[string]any{
		"planned": r.PlannedRequests, "requests": r.Requests, "warmup": r.WarmupRequests, "all_output_tokens": r.AllOutputTokens,
		"outcomes": r.Outcomes, "not_sent": r.NotSent, "failures": r.Failures, "token_sources": r.TokenSources,
		"latency": r.Latency, "achieved_rate": r.AchievedRate, "throughput": r.Throughput, "goodput": r.Goodput,
		"slo_gates": slo, "passed": r.Passed, "aborted": r.Aborted, "client_saturated": r.ClientSaturated,
		"start": r.Start.UnixNano(), "end": r.End.UnixNano(), "duration": r.DurationSeconds,
		"ttft_series": r.TTFTSeries, "samples": r.Samples, "regression": r.Regression, "ttft_breakdown": r.TTFTBreakdown,
	}
}

// splitOf splits a synthetic request's TTFT as the prober would, with the
// engine's queue and prefill or without, the parts adding up to TTFT.
func splitOf(res *prober.Result, engine bool) []prober.TTFTPart {
	connect := res.TTFT / 50
	server := res.TTFT - res.DispatchDelay - connect
	parts := []prober.TTFTPart{{Component: prober.ComponentDispatch, D: res.DispatchDelay}, {Component: prober.ComponentConnect, D: connect}}
	if !engine {
		return append(parts, prober.TTFTPart{Component: prober.ComponentServerOther, D: server})
	}
	queue, prefill := server/4, server/2
	return append(parts, prober.TTFTPart{Component: prober.ComponentEngineQueue, D: queue},
		prober.TTFTPart{Component: prober.ComponentEnginePrefill, D: prefill},
		prober.TTFTPart{Component: prober.ComponentNetwork, D: server - queue - prefill})
}

// compareFigures fails on every figure that differs, bit for bit.
func compareFigures(t *testing.T, got, want *report.Report) {
	t.Helper()
	g, w := mergedFigures(got), mergedFigures(want)
	for k := range w {
		gj, _ := json.Marshal(g[k])
		wj, _ := json.Marshal(w[k])
		if string(gj) != string(wj) {
			t.Errorf("%s: merged %s\n  single-process %s", k, gj, wj)
		}
	}
}

// synthetic is a large run with every kind of request Build tells apart:
// successes with and without objectives met, answers that pass their
// checks and answers that fail them, a success that never saw a token, one-token answers, each failure outcome with its reasons, and
// cancelled requests. It is big enough that the report thins the
// significance samples (5000) and the TTFT series (2000).
func synthetic(n int) report.Run {
	rng := rand.New(rand.NewPCG(3, 5))
	start := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	ms := func(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }
	run := report.Run{Rate: 100, Planned: n + 7, Warmup: 40, AllOutputTokens: 0, NotSent: map[string]int{"cancelled": 4, "safety brake: error ratio": 3}}
	at := start
	for i := range n {
		at = at.Add(ms(rng.ExpFloat64() * 10))
		res := &prober.Result{Sched: at, DispatchDelay: ms(rng.Float64() * 0.5), PromptTokensRequested: 64}
		switch x := rng.IntN(100); {
		case x < 80:
			res.Outcome, res.HTTPStatus = prober.OutcomeSuccess, 200
			res.OutputTokens = 1 + rng.IntN(30)
			res.OutputChunks = res.OutputTokens
			if x == 0 {
				res.OutputChunks = 0 // usage only: no first token seen
			}
			res.TokenSource = prober.TokensFromUsage
			if x%7 == 0 {
				res.TokenSource = prober.TokensFromChunks
			} else {
				res.PromptTokensReported = 60 + rng.IntN(10)
			}
			res.TTFT = ms(20 + rng.ExpFloat64()*40)
			if res.OutputChunks > 0 {
				res.TTFTParts = splitOf(res, x%3 == 0)
			}
			if x%3 == 0 {
				res.Engine = &prober.EngineTimings{Source: prober.TimingsVLLM}
			}
			e := res.TTFT
			for range res.OutputTokens - 1 {
				d := ms(5 + rng.ExpFloat64()*3)
				res.ITL = append(res.ITL, d)
				e += d
			}
			res.E2E = e + ms(rng.Float64())
			if res.OutputTokens > 1 {
				res.TPOT = (res.E2E - res.TTFT) / time.Duration(res.OutputTokens-1)
			}
			res.Checks = []prober.Check{{Objective: "ttft", Met: res.TTFT < ms(80)}, {Objective: "tpot", Met: res.TPOT < ms(7)}}
			res.Quality = &prober.QualityResult{Passed: x%5 != 0}
			if x%4 == 1 { // a function call, and the inputs of a pooled answer, kept through the shards
				res.TTFTool, res.Inputs = res.TTFT+ms(1), 3
			}
			res.Good = res.Checks[0].Met && res.Checks[1].Met && res.Quality.Passed
			run.AllOutputTokens += res.OutputTokens
		case x < 88:
			res.Outcome, res.HTTPStatus, res.Phase, res.Reason = prober.OutcomeRejected, 503, "headers", "http_status"
			res.E2E, res.Error = ms(2+rng.Float64()), fmt.Sprintf("HTTP 503 number %d", i)
		case x < 92:
			res.Outcome, res.Phase, res.Reason = prober.OutcomeTimeout, "stream", "deadline"
			res.TTFT, res.OutputChunks = ms(30), 2
			res.E2E, res.Error = ms(5000), fmt.Sprintf("deadline %d", i)
		case x < 95:
			res.Outcome, res.Phase, res.Reason = prober.OutcomeStreamError, "stream", []string{"malformed_chunk", "no_finish"}[x%2]
			res.E2E, res.Error = ms(40), fmt.Sprintf("broken %d", i)
		case x < 97:
			res.Outcome, res.Phase, res.Reason = prober.OutcomeConnectionError, "connect", "refused"
			res.E2E, res.Error = ms(1), fmt.Sprintf("refused %d", i)
		default:
			res.Outcome, res.E2E = prober.OutcomeCancelled, ms(100)
		}
		if res.Outcome != prober.OutcomeSuccess && res.Outcome != prober.OutcomeCancelled {
			res.Checks = []prober.Check{{Objective: "ttft"}, {Objective: "tpot"}}
		}
		run.Results = append(run.Results, res)
		if run.Start.IsZero() {
			run.Start = res.Sched
		}
		run.End = maxTime(run.End, res.Sched.Add(res.E2E))
	}
	return run
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Merging the reports of shards gives exactly the report Build makes of
// the union of their requests: every summary, count, rate, gate and
// verdict, bit for bit, and the regression against a baseline too.
func TestMergeIsExact(t *testing.T) {
	b, s := reporttest.GoldenBurst()
	s.SLO.TPOT = config.Duration(7 * time.Millisecond)
	s.SLO.QualityRatio = 0.8 // the synthetic runs' answers pass their checks 4 times in 5
	meta := func(v string) report.Meta {
		return report.Meta{Model: "m", Engine: "llmprobe-sim", EngineVersion: v, Version: "test", Host: "host", Scenarios: []config.Scenario{s}}
	}
	before, after := reporttest.Fixture(t, reporttest.Upgrade[0].File), reporttest.Fixture(t, reporttest.Upgrade[1].File)
	baseline := report.Build(b, before.Run, meta(before.EngineVersion))
	report.Judge(baseline, nil, b.MaxRegression)
	for _, tc := range []struct {
		name     string
		run      report.Run
		version  string
		baseline *report.Report
		shards   int
	}{
		{"recorded before the upgrade, 3 shards", before.Run, before.EngineVersion, nil, 3},
		{"recorded after the upgrade, against the one before, 3 shards", after.Run, after.EngineVersion, baseline, 3},
		{"recorded after the upgrade, 7 shards", after.Run, after.EngineVersion, baseline, 7},
		{"synthetic, 12000 requests, 3 shards", synthetic(12000), "0.12.0", nil, 3},
		{"synthetic, 2 shards", synthetic(3000), "0.12.0", baseline, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			whole := report.Build(b, tc.run, meta(tc.version))
			report.Judge(whole, tc.baseline, b.MaxRegression)
			origin := tc.run.Start.Add(-time.Second) // the warmup came first
			parts := shardParts(t, b, meta(tc.version), splitRun(tc.run, tc.shards, origin))
			merged, err := mergeShards(parts, tc.baseline)
			if err != nil {
				t.Fatal(err)
			}
			compareFigures(t, merged, whole)
			if merged.Shard != nil || merged.Merged == nil || len(merged.Merged.Shards) != tc.shards || len(merged.Merged.Approximate) != 0 {
				t.Errorf("merged report: shard %+v, merged %+v", merged.Shard, merged.Merged)
			}
			if !merged.Merged.Start.Equal(origin) {
				t.Errorf("merged start %s, want %s", merged.Merged.Start, origin)
			}
			if merged.Latency["itl"].Count == 0 {
				t.Error("no ITL in the merged report")
			}
			failed := len(tc.run.Results) - merged.Outcomes[prober.OutcomeSuccess]
			if len(merged.FailedSamples) != min(failed, 10) {
				t.Errorf("%d failed samples of %d failed requests", len(merged.FailedSamples), failed)
			}
			// The shards' own reports are parts: never a verdict on the SLO,
			// never compared with a baseline.
			for _, p := range parts {
				r := p.Report
				if r.Shard == nil || r.Regression != nil || !strings.Contains(r.RegressionSkipped, "of a split burst") {
					t.Errorf("%s: shard %v, regression %v, skipped %q", p.Name, r.Shard, r.Regression, r.RegressionSkipped)
				}
				for _, g := range r.Gates {
					if !g.Skipped || !g.Passed {
						t.Errorf("%s: gate %s judged on a share: %+v", p.Name, g.Name, g)
					}
				}
			}
		})
	}
}

// A saturated shard's client makes the merged report's client saturated,
// and the warning names the shard.
func TestMergeSaturatedShard(t *testing.T) {
	b, s := reporttest.GoldenBurst()
	meta := report.Meta{Model: "m", Scenarios: []config.Scenario{s}}
	run := reporttest.Fixture(t, reporttest.Upgrade[0].File).Run
	parts := shardParts(t, b, meta, splitRun(run, 3, run.Start))
	parts[1].Report.ClientSaturated = true
	merged, err := mergeShards(parts, nil)
	if err != nil {
		t.Fatal(err)
	}
	var detail string
	for _, c := range render.Checks(merged) {
		if c.Name == "client_saturation" {
			detail = string(c.Status) + ": " + c.Detail
		}
	}
	if !merged.ClientSaturated || !strings.Contains(detail, "warning: shard 1/3 saturated by its own error bound") {
		t.Errorf("saturated %v, check %q", merged.ClientSaturated, detail)
	}
}

// Merge refuses what is not every shard of one run of one burst, naming
// the file.
func TestMergeRefuses(t *testing.T) {
	b, s := reporttest.GoldenBurst()
	meta := report.Meta{Model: "m", Scenarios: []config.Scenario{s}}
	run := reporttest.Fixture(t, reporttest.Upgrade[0].File).Run
	fresh := func() []report.ShardReport { return shardParts(t, b, meta, splitRun(run, 3, run.Start)) }
	whole := report.Build(b, run, meta)
	for _, tc := range []struct {
		name  string
		parts func() []report.ShardReport
		want  string
	}{
		{"missing shard", func() []report.ShardReport { p := fresh(); return []report.ShardReport{p[0], p[2]} },
			"burst b was split over 3 shards; missing shard 1/3 (given: 0/3 shard-0.json, 2/3 shard-2.json)"},
		{"duplicate index", func() []report.ShardReport { p := fresh(); p[2].Report.Shard.Index = 0; return p },
			"shard-0.json and shard-2.json are both shard 0/3"},
		{"another seed", func() []report.ShardReport { p := fresh(); p[1].Report.Seed = 99; return p },
			"shard-1.json has seed 99 but shard-0.json has 1: not shards of one run of one burst"},
		{"another start", func() []report.ShardReport {
			p := fresh()
			p[2].Report.Shard.Start = p[2].Report.Shard.Start.Add(time.Second)
			return p
		},
			"shard-2.json has start"},
		{"another shard count", func() []report.ShardReport { p := fresh(); p[1].Report.Shard.Count = 4; return p },
			"shard-1.json has shard count 4 but shard-0.json has 3"},
		{"another configuration", func() []report.ShardReport { p := fresh(); p[1].Report.Config["max_concurrency"] = 3; return p },
			"shard-1.json ran burst b with another configuration than shard-0.json"},
		{"a whole report", func() []report.ShardReport {
			return append(fresh(), report.ShardReport{Name: "whole.json", Report: whole})
		},
			`whole.json is not a shard's report: it has no "shard" section`},
		{"an altered row", func() []report.ShardReport { p := fresh(); p[1].Report.Shard.Requests[0].N = 3; return p },
			"shard-1.json: request n=3 is not shard 1/3's"},
		{"nothing", func() []report.ShardReport { return nil }, "no shard reports to merge"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := mergeShards(tc.parts(), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	// A merged report is not a shard, and says so.
	merged, err := mergeShards(fresh(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mergeShards([]report.ShardReport{{Name: "merged.json", Report: merged}}, nil); err == nil || !strings.Contains(err.Error(), "merged.json is already a merged report") {
		t.Errorf("merging a merged report: %v", err)
	}
	// A shard's report is no baseline for a whole burst.
	rep := report.Build(b, run, meta)
	report.Judge(rep, fresh()[0].Report, b.MaxRegression)
	if rep.Regression != nil || !strings.Contains(rep.RegressionSkipped, "it is shard 0/3 of a split burst, not the whole burst") {
		t.Errorf("a shard as baseline: regression %v, skipped %q", rep.Regression, rep.RegressionSkipped)
	}
	if !reflect.DeepEqual(rep.Config, whole.Config) {
		t.Error("Build is not deterministic")
	}
	// A baseline given to the merge is named: one of another model fails it.
	other := report.Build(b, run, meta)
	other.Model = "another"
	refused, err := mergeShards(fresh(), other)
	if err != nil || refused.Passed || !strings.Contains(report.Refused(refused), `not comparable: model "another"`) {
		t.Errorf("a named baseline of another model: err %v, passed %v, refused %q", err, refused.Passed, report.Refused(refused))
	}
}

// A merged report whose shards kept a subset of their ITL samples takes
// its ITL figures from the subsets, and says so.
func TestMergeSaysITLIsApproximate(t *testing.T) {
	b, runs := reporttest.ShardRuns(time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC))
	var parts []report.ShardReport
	for i, run := range runs {
		rep := report.Build(b, run, report.Meta{})
		rep.Shard.ITL = rep.Shard.ITL[:10] // as a shard past a bound of 10 keeps them
		parts = append(parts, report.ShardReport{Name: fmt.Sprintf("s%d", i), Report: rep})
	}
	merged, err := mergeShards(parts, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "itl: figures from 20 of 48 samples (shard 0/2 kept 10 of 24, shard 1/2 kept 10 of 24; a shard keeps at most 10)"
	if merged.Latency["itl"].Count != 20 || len(merged.Merged.Approximate) != 1 || merged.Merged.Approximate[0] != want {
		t.Errorf("merged itl %+v, approximate %q", merged.Latency["itl"], merged.Merged.Approximate)
	}
}

// mergeShards is llmprobe report merge's merge: the shards' report, judged
// by the one pipeline against baseline.
func mergeShards(parts []report.ShardReport, baseline *report.Report) (*report.Report, error) {
	merged, b, err := report.MergeShards(parts)
	if err != nil {
		return nil, err
	}
	return merged, burst.Pipeline{Baseline: baseline}.Finish(merged, b.MaxRegression, 0, nil)
}

// The read side of the merged bound is the worst shard's, part by part,
// and so is the CPU throttling its verdict's caveat names; one shard
// without a read side leaves the merged one n/a.
func TestMergeKeepsTheReadSide(t *testing.T) {
	b, s := reporttest.GoldenBurst()
	meta := report.Meta{Model: "m", Scenarios: []config.Scenario{s}}
	run := reporttest.Fixture(t, reporttest.Upgrade[0].File).Run
	fig := func(v float64) *float64 { return &v }
	sides := []*stats.RuntimeDelays{
		{ReadDelay: stats.Tail{Count: 10, P99: fig(0.004), Max: fig(0.006)}, Throttled: &stats.Throttling{Seconds: 0.12, Periods: 3}},
		{ReadDelay: stats.Tail{Count: 10, P99: fig(0.009), Max: fig(0.011)}, Throttled: &stats.Throttling{Seconds: 0.34, Periods: 7}},
		{ReadDelay: stats.Tail{Count: 10, P99: fig(0.002), Max: fig(0.030)}, Throttled: &stats.Throttling{Seconds: 0.05, Periods: 1}},
	}
	runs := splitRun(run, 3, run.Start)
	for i := range runs {
		runs[i].Runtime = sides[i]
	}
	merged, err := mergeShards(shardParts(t, b, meta, runs), nil)
	if err != nil {
		t.Fatal(err)
	}
	rt := merged.ErrorBound.Runtime
	if rt == nil || *rt.ReadDelay.P99 != 0.009 || *rt.ReadDelay.Max != 0.030 || rt.ReadDelay.Count != 30 || merged.ErrorBound.P99 == nil {
		t.Fatalf("merged read side %+v, bound p99 %v", rt, merged.ErrorBound.P99)
	}
	if th := report.Throttled(merged); th == nil || th.Seconds != 0.34 || th.Periods != 7 {
		t.Errorf("merged throttling %+v, want the most throttled shard's", th)
	}
	if v := report.VerdictOf(merged); !strings.Contains(v.Reason, "llmprobe was throttled for 340") {
		t.Errorf("verdict %q says nothing of the throttling", v.Reason)
	}

	runs[1].Runtime = nil
	merged, err = mergeShards(shardParts(t, b, meta, runs), nil)
	if err != nil {
		t.Fatal(err)
	}
	if merged.ErrorBound.Runtime != nil || merged.ErrorBound.P99 != nil || report.Throttled(merged) != nil {
		t.Errorf("a shard without its read side: merged %+v", merged.ErrorBound)
	}
}
