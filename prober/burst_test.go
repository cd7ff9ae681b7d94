package prober

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/sim"
)

var update = flag.Bool("update", false, "rewrite golden files")

// serialSim serves one request at a time: 20 ms to the first token and 20 ms
// per further token, so 5 tokens take 100 ms and capacity is exactly 10/s.
func serialSim(t *testing.T, maxBatch int) (*Client, *sim.Engine) {
	t.Helper()
	srv, e := startSim(t, func(c *sim.Config) {
		c.MaxBatch, c.MaxQueue = maxBatch, 10000
		c.PrefillBase, c.PrefillPerToken, c.DecodeBase, c.DecodePerSeq = 20*time.Millisecond, 0, 20*time.Millisecond, 0
	})
	target := testTarget(srv.URL, config.APICompletions)
	target.Timeout = config.Duration(30 * time.Second)
	c, err := NewClient(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, e
}

func burstScenario() config.Scenario {
	s := testScenario()
	s.OutputTokens = config.Distribution{Kind: config.DistFixed, Value: 5}
	s.SLO = config.SLO{TTFT: config.Duration(100 * time.Millisecond), TargetRatio: 0.9}
	return s
}

func burstOf(process string, rate float64, d time.Duration) config.Burst {
	b := config.DefaultBurst
	b.Name, b.Target = "b", "t"
	b.Scenarios = []config.WeightedScenario{{Scenario: "s", Weight: 1}}
	b.Arrival = config.Arrival{Process: process, Rate: rate, Burstiness: 1}
	b.Duration = config.Duration(d)
	return b
}

func runAt(t *testing.T, c *Client, b config.Burst) *Report {
	t.Helper()
	s := burstScenario()
	return Run(context.Background(), BurstRun{Burst: b, Client: c, Scenarios: []config.Scenario{s}}, ReportMeta{Scenarios: []config.Scenario{s}}, nil)
}

// Open loop: past capacity the queue grows and latency with it, because
// requests keep coming at their planned times.
func TestOpenLoopShowsOverload(t *testing.T) {
	c, _ := serialSim(t, 1)
	under := runAt(t, c, burstOf(config.ArrivalPoisson, 5, 2*time.Second))
	over := runAt(t, c, burstOf(config.ArrivalPoisson, 20, 2*time.Second))
	u, o := under.Latency["ttft"].P99, over.Latency["ttft"].P99
	if o < 5*u || o < 0.5 {
		t.Errorf("p99 TTFT at half capacity %.3fs, at twice capacity %.3fs: overload does not show", u, o)
	}
	if over.AchievedRate < 15 {
		t.Errorf("achieved rate %.1f at a planned 20/s: the prober held back (closed loop?)", over.AchievedRate)
	}
}

// The concurrency cap's waiting counts in latency, not in dispatch delay.
func TestConcurrencyCapWaitCounts(t *testing.T) {
	c, _ := serialSim(t, 64) // the server could take them all
	b := burstOf(config.ArrivalConstant, 20, 2*time.Second)
	b.MaxConcurrency = 1 // but the prober sends one at a time
	rep := runAt(t, c, b)
	if p99 := rep.Latency["ttft"].P99; p99 < 0.5 {
		t.Errorf("p99 TTFT %.3fs: the cap's waiting is missing from latency", p99)
	}
	if d := rep.Latency["dispatch_delay"].P99; d > 0.05 {
		t.Errorf("dispatch delay p99 %.3fs: cap waiting was charged to the prober", d)
	}
}

func TestWarmupExcluded(t *testing.T) {
	c, e := serialSim(t, 8)
	b := burstOf(config.ArrivalConstant, 50, 0)
	b.Duration, b.Requests, b.Warmup = 0, 10, config.Warmup{Requests: 5}
	out := RunBurst(context.Background(), BurstRun{Burst: b, Rate: 50, Client: c, Scenarios: []config.Scenario{burstScenario()}})
	if len(out.Results) != 10 || out.Warmup != 5 || out.Planned != 10 {
		t.Fatalf("results %d, warmup %d, planned %d; want 10, 5, 10", len(out.Results), out.Warmup, out.Planned)
	}
	if got := e.Stats().Completed; got != 15 {
		t.Errorf("the sim completed %d requests, want 15 (warmup is sent)", got)
	}
	for _, r := range out.Results {
		if r.Sched.Before(out.Start) {
			t.Errorf("a result due at %s, before the measured start %s", r.Sched, out.Start)
		}
	}
}

// The safety brake stops a burst within its window once the target starts
// answering 503.
func TestSafetyBrake(t *testing.T) {
	c, e := serialSim(t, 64)
	b := burstOf(config.ArrivalConstant, 40, 20*time.Second)
	b.Brake = config.Brake{Window: config.Duration(time.Second), MaxRejectRatio: 0.5}
	flipped := make(chan time.Time, 1)
	go func() {
		time.Sleep(time.Second)
		_ = e.SetFaults(sim.Faults{ErrorRate: 1, ErrorStatus: 503})
		flipped <- time.Now()
	}()
	start := time.Now()
	out := RunBurst(context.Background(), BurstRun{Burst: b, Rate: 40, Client: c, Scenarios: []config.Scenario{burstScenario()}})
	stopped := time.Now()
	at := <-flipped
	if !out.Aborted || !strings.Contains(out.AbortReason, "reject") {
		t.Fatalf("aborted=%v (%s), want the reject brake", out.Aborted, out.AbortReason)
	}
	if d := stopped.Sub(at); d > 2*time.Second {
		t.Errorf("stopped %s after the target began rejecting; the window is 1s", d)
	}
	if stopped.Sub(start) > 5*time.Second {
		t.Errorf("the burst ran %s of its 20s", stopped.Sub(start))
	}
	rep := BuildReport(b, out, ReportMeta{}, nil)
	if rep.Passed || !rep.Aborted {
		t.Error("an aborted burst passed")
	}
}

// A sweep against a server of known capacity (10/s) finds the knee within one step.
func TestSweepFindsKnee(t *testing.T) {
	c, _ := serialSim(t, 1)
	b := burstOf(config.ArrivalConstant, 1, 3*time.Second)
	b.Sweep = &config.Sweep{Auto: &config.AutoSweep{Start: 4, Step: 2, Max: 16}}
	rep := runAt(t, c, b)
	if rep.MaxRateUnderSLO == nil {
		t.Fatalf("no rate met the SLO: %+v", rep.Sweep)
	}
	if got := *rep.MaxRateUnderSLO; got < 8 || got > 10 {
		t.Errorf("max rate under SLO = %g, want the knee at 10/s within one step: %+v", got, rep.Sweep)
	}
	last := rep.Sweep[len(rep.Sweep)-1]
	if last.Passed || last.Rate > *rep.MaxRateUnderSLO+2*2 {
		t.Errorf("the sweep did not stop at the first failing step: %+v", rep.Sweep)
	}
}

// goldenOutcome is a fixed run, so the report is byte-for-byte reproducible.
func goldenOutcome() (*BurstOutcome, config.Burst, ReportMeta) {
	b := burstOf(config.ArrivalPoisson, 10, 10*time.Second)
	b.MaxRegression = []config.MaxRegression{{Metric: "ttft", Quantile: "p99", MaxIncrease: 0.2, Significant: true}}
	s := burstScenario()
	start := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	o := &BurstOutcome{Rate: 10, Start: start, Planned: 20, Warmup: 2}
	for i := range 20 {
		r := &Result{
			Target: "t", Model: "m", Scenario: "s", Traffic: TrafficBurst,
			Sched: start.Add(time.Duration(i) * 100 * time.Millisecond), Outcome: OutcomeSuccess,
			DispatchDelay: time.Duration(100+i) * time.Microsecond,
			TTFT:          time.Duration(40+3*i) * time.Millisecond, E2E: time.Duration(200+5*i) * time.Millisecond,
			OutputTokens: 5, TokenSource: TokensFromUsage, OutputChunks: 5, PromptTokensRequested: 16, PromptTokensReported: 16,
			ITL: []time.Duration{10 * time.Millisecond, 11 * time.Millisecond, 12 * time.Millisecond, 13 * time.Millisecond},
		}
		if i == 19 {
			r.Outcome, r.OutputTokens, r.ITL = OutcomeRejected, 0, nil
		}
		r.TPOT = (r.E2E - r.TTFT) / 4
		Evaluate(r, s)
		o.Results = append(o.Results, r)
		o.End = r.Sched.Add(r.E2E)
	}
	return o, b, ReportMeta{Model: "m", Engine: "vllm", EngineVersion: "0.12.0", Version: "test", Host: "host", Scenarios: []config.Scenario{s}}
}

func TestReportGolden(t *testing.T) {
	o, b, meta := goldenOutcome()
	prevTTFT := make([]float64, 20)
	for i := range prevTTFT {
		prevTTFT[i] = 0.030 + 0.0005*float64(i)
	}
	prev := &Report{ID: "b-20261121T120000Z", EngineVersion: "0.11.0",
		Latency: map[string]Summary{"ttft": Summarize(append([]float64(nil), prevTTFT...))},
		Samples: map[string][]float64{"ttft": prevTTFT}}
	rep := BuildReport(b, o, meta, prev)
	got, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "report.golden.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./prober -run ReportGolden -update)", err)
	}
	if string(want) != string(got)+"\n" {
		t.Errorf("report differs from %s (run with -update after checking the change):\n%s", golden, got)
	}
	// Facts the golden file encodes, spelled out.
	if !rep.Regression.EngineVersionChanged || rep.Passed {
		t.Errorf("engine change %v, passed %v: want the upgrade seen and the regression gate failed", rep.Regression.EngineVersionChanged, rep.Passed)
	}
	if rep.Outcomes[OutcomeRejected] != 1 || rep.Goodput.Ratio >= 1 {
		t.Errorf("outcomes %v, goodput %.2f", rep.Outcomes, rep.Goodput.Ratio)
	}
}

// A write that breaks off leaves the old file, and no temporary file behind.
func TestStoreWritesAtomically(t *testing.T) {
	dir := t.TempDir()
	store := NewStore(dir)
	o, b, meta := goldenOutcome()
	rep := BuildReport(b, o, meta, nil)
	if err := store.Save(rep, 5); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "b", rep.ID+".json")
	before, _ := os.ReadFile(path)
	broken := errors.New("disk full")
	err := WriteAtomic(filepath.Dir(path), filepath.Base(path), func(w io.Writer) error {
		_, _ = w.Write([]byte(`{"id": "torn`))
		return broken
	})
	if !errors.Is(err, broken) {
		t.Fatalf("err = %v", err)
	}
	after, _ := os.ReadFile(path)
	if string(after) != string(before) {
		t.Fatal("an interrupted write changed the report")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("files left: %v", entries)
	}
	// A temporary file left by a crash is not a report.
	if err := os.WriteFile(filepath.Join(dir, "b", ".b-x.json.tmp-123"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	latest, err := store.Latest("b")
	if err != nil || latest.ID != rep.ID {
		t.Errorf("latest = %v, %v", latest, err)
	}
	// keep bounds the reports per burst.
	for i := range 4 {
		r := *rep
		r.ID = fmt.Sprintf("b-2027010%dT000000Z", i+1)
		if err := store.Save(&r, 3); err != nil {
			t.Fatal(err)
		}
	}
	list, _ := store.List()
	if len(list["b"]) != 3 || list["b"][0] != "b-20270104T000000Z" {
		t.Errorf("kept %v", list["b"])
	}
}
