// Package reporttest holds what the report packages' tests share: the
// golden drill's burst and its recorded runs, and small runs made by hand.
package reporttest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/prompt"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/shard"
	"github.com/llmprobe/llmprobe/stats"
)

// Recorded is one real burst against the simulated engine, kept so that the
// golden report is built from measured requests, byte for byte.
type Recorded struct {
	EngineVersion string     `json:"engine_version"`
	Run           report.Run `json:"run"`
}

// Upgrade is the drill the product exists for: the same burst before and
// after an engine upgrade that made prefill 20 ms slower and started
// shedding load, recorded in report/testdata.
var Upgrade = []struct {
	File, Version string
	Prefill       time.Duration
	ErrorRate     float64
}{
	{"run-before.json", "0.11.0", 40 * time.Millisecond, 0},
	{"run-after.json", "0.12.0", 60 * time.Millisecond, 0.1},
}

// GoldenBurst is the drill's burst and its one scenario.
func GoldenBurst() (config.Burst, config.Scenario) {
	b := config.DefaultBurst
	b.Name, b.Target = "b", "t"
	b.Scenarios = []config.WeightedScenario{{Scenario: "s", Weight: 1}}
	b.Arrival = config.Arrival{Process: config.ArrivalPoisson, Rate: 10, Burstiness: 1}
	b.Requests = 20
	b.Warmup = config.Warmup{Requests: 2}
	// Both runs replay one seed on a quiet sim: no spread between runs
	// beyond each run's sampling error, which at 20 requests still lets a
	// +49 % median show itself beyond +10 %.
	b.MaxRegression = []config.MaxRegression{{Metric: "ttft", Quantile: "p50", MaxIncrease: 0.1, Spread: F(0)}}
	// Its recorded runs are 20 requests: too few for any interval to show
	// 90 % met (35 at least), so the drill counts its error budget.
	b.SLORule = config.SLORulePoint
	s := testkit.Scenario()
	s.OutputTokens = config.Distribution{Kind: config.DistFixed, Value: 5}
	s.SLO = config.SLO{TTFT: config.Duration(100 * time.Millisecond), TargetRatio: 0.9}
	return b, s
}

// Testdata is report/testdata, wherever the test runs.
func Testdata() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "report", "testdata")
}

// Fixture reads one of the drill's recorded runs.
func Fixture(t testing.TB, file string) Recorded {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(Testdata(), file))
	if err != nil {
		t.Fatalf("%v (record it: go test ./report -run ReportGolden -record)", err)
	}
	var r Recorded
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return r
}

// F is a figure.
func F(v float64) *float64 { return &v }

// Millis is d milliseconds.
func Millis(d float64) time.Duration { return time.Duration(d * float64(time.Millisecond)) }

// Scenario is a scenario with only a name and an SLO.
func Scenario(name string, slo config.SLO) config.Scenario {
	return config.Scenario{Name: name, SLO: slo}
}

// Burst is burst "b" of target "t" with one scenario "s" of a 100 ms TTFT
// objective at 90 %.
func Burst() (config.Burst, []config.Scenario) {
	b := config.DefaultBurst
	b.Name, b.Target = "b", "t"
	b.Scenarios = []config.WeightedScenario{{Scenario: "s", Weight: 1}}
	return b, []config.Scenario{Scenario("s", config.SLO{TTFT: config.Duration(Millis(100)), TargetRatio: 0.9})}
}

// Results are n successful requests of scenario s, due every 100 ms from
// start, each released dispatch late.
func Results(s config.Scenario, start time.Time, n int, dispatch time.Duration) []*prober.Result {
	var out []*prober.Result
	for i := range n {
		res := &prober.Result{Outcome: prober.OutcomeSuccess, Sched: start.Add(time.Duration(i) * 100 * time.Millisecond), OutputChunks: 5,
			TTFT: 50 * time.Millisecond, E2E: 90 * time.Millisecond, OutputTokens: 5, TokenSource: prober.TokensFromUsage, DispatchDelay: dispatch}
		prober.Evaluate(res, s, prompt.Prompt{})
		out = append(out, res)
	}
	return out
}

// GoldenPair is the drill's two reports: before the upgrade (passed) and
// after it (failed on TTFT, the regression and the shed requests).
func GoldenPair(t testing.TB) (before, after *report.Report) {
	t.Helper()
	b, s := GoldenBurst()
	meta := func(v string) report.Meta {
		return report.Meta{Model: "m", Engine: "llmprobe-sim", EngineVersion: v, Version: "test", Host: "host", Scenarios: []config.Scenario{s}}
	}
	fb, fa := Fixture(t, Upgrade[0].File), Fixture(t, Upgrade[1].File)
	before = report.Build(b, fb.Run, meta(fb.EngineVersion))
	report.Judge(before, nil, b.MaxRegression)
	after = report.Build(b, fa.Run, meta(fa.EngineVersion))
	report.Judge(after, before, b.MaxRegression)
	return before, after
}

// UpgradeRun is a report of burst "b" on vllm version v whose TTFT samples
// are ttft and TPOT samples tpot.
func UpgradeRun(id, v string, ttft, tpot []float64) *report.Report {
	r := &report.Report{ID: id, Burst: "b", Target: "t", Model: "m", Engine: "vllm", EngineVersion: v, Requests: len(ttft),
		Latency: map[string]stats.Summary{}, Samples: map[string][]float64{"ttft": ttft, "tpot": tpot}}
	r.Latency["ttft"] = stats.Summarize(append([]float64(nil), ttft...))
	r.Latency["tpot"] = stats.Summarize(append([]float64(nil), tpot...))
	return r
}

// Spread is n values from base in ten steps of step, repeating.
func Spread(n int, base, step float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = base + float64(i%10)*step
	}
	return out
}

// ShardRuns are the two shards' runs of a burst of six requests split
// over two replicas, each successful request with eight ITL samples.
func ShardRuns(origin time.Time) (config.Burst, []report.Run) {
	b := config.DefaultBurst
	b.Name, b.Target, b.Requests = "b", "t", 6
	var runs []report.Run
	for sh := range 2 {
		run := report.Run{Rate: 1, Planned: 3, Shard: shard.Shard{Index: sh, Count: 2}, Origin: origin, NotSent: map[string]int{}}
		for i := range 3 {
			n := 2*i + sh
			res := &prober.Result{Sched: origin.Add(time.Duration(n) * time.Second), Outcome: prober.OutcomeSuccess, OutputTokens: 9, OutputChunks: 9,
				TTFT: 10 * time.Millisecond, E2E: 90 * time.Millisecond, TPOT: 10 * time.Millisecond}
			for k := range 8 {
				res.ITL = append(res.ITL, time.Duration(n*8+k)*time.Millisecond)
			}
			run.Results, run.Index = append(run.Results, res), append(run.Index, n)
		}
		run.Start, run.End = run.Results[0].Sched, run.Results[2].Sched.Add(90*time.Millisecond)
		runs = append(runs, run)
	}
	return b, runs
}
