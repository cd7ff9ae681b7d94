package report

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prober"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var update = flag.Bool("update", false, "rewrite golden files")

// goldenOutcome is a fixed run, so the report is byte-for-byte reproducible.
func goldenOutcome() (Run, config.Burst, Meta) {
	b := config.DefaultBurst
	b.Name, b.Target = "b", "t"
	b.Scenarios = []config.WeightedScenario{{Scenario: "s", Weight: 1}}
	b.Arrival = config.Arrival{Process: config.ArrivalPoisson, Rate: 10, Burstiness: 1}
	b.Duration = config.Duration(10 * time.Second)
	b.MaxRegression = []config.MaxRegression{{Metric: "ttft", Quantile: "p99", MaxIncrease: 0.2, Significant: true}}
	s := testkit.Scenario()
	s.OutputTokens = config.Distribution{Kind: config.DistFixed, Value: 5}
	s.SLO = config.SLO{TTFT: config.Duration(100 * time.Millisecond), TargetRatio: 0.9}
	start := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	o := Run{Rate: 10, Start: start, Planned: 20, Warmup: 2}
	for i := range 20 {
		r := &prober.Result{
			Target: "t", Model: "m", Scenario: "s", Traffic: prober.TrafficBurst,
			Sched: start.Add(time.Duration(i) * 100 * time.Millisecond), Outcome: prober.OutcomeSuccess,
			DispatchDelay: time.Duration(100+i) * time.Microsecond,
			TTFT:          time.Duration(40+3*i) * time.Millisecond, E2E: time.Duration(200+5*i) * time.Millisecond,
			OutputTokens: 5, TokenSource: prober.TokensFromUsage, OutputChunks: 5, PromptTokensRequested: 16, PromptTokensReported: 16,
			ITL: []time.Duration{10 * time.Millisecond, 11 * time.Millisecond, 12 * time.Millisecond, 13 * time.Millisecond},
		}
		if i == 19 {
			r.Outcome, r.OutputTokens, r.ITL = prober.OutcomeRejected, 0, nil
		}
		r.TPOT = (r.E2E - r.TTFT) / 4
		prober.Evaluate(r, s)
		o.Results = append(o.Results, r)
		o.End = r.Sched.Add(r.E2E)
	}
	return o, b, Meta{Model: "m", Engine: "vllm", EngineVersion: "0.12.0", Version: "test", Host: "host", Scenarios: []config.Scenario{s}}
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
	rep := Build(b, o, meta)
	rep.Judge(prev)
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
		t.Fatalf("%v (run go test ./report -run ReportGolden -update)", err)
	}
	if string(want) != string(got)+"\n" {
		t.Errorf("report differs from %s (run with -update after checking the change):\n%s", golden, got)
	}
	// Facts the golden file encodes, spelled out.
	if !rep.Regression.EngineVersionChanged || rep.Passed {
		t.Errorf("engine change %v, passed %v: want the upgrade seen and the regression gate failed", rep.Regression.EngineVersionChanged, rep.Passed)
	}
	if rep.Outcomes[prober.OutcomeRejected] != 1 || rep.Goodput.Ratio >= 1 {
		t.Errorf("outcomes %v, goodput %.2f", rep.Outcomes, rep.Goodput.Ratio)
	}
}

// A write that breaks off leaves the old file, and no temporary file behind.
func TestStoreWritesAtomically(t *testing.T) {
	dir := t.TempDir()
	store := NewStore(dir)
	o, b, meta := goldenOutcome()
	rep := Build(b, o, meta)
	rep.Judge(nil)
	if err := store.Save(rep, 5); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "b", rep.ID+".json")
	before, _ := os.ReadFile(path)
	broken := errors.New("disk full")
	err := writeAtomic(filepath.Dir(path), filepath.Base(path), func(w io.Writer) error {
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
