package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/sim"
	"github.com/llmprobe/llmprobe/stats"
)

// The gate against each way a target breaks (the daemon's failure catalogue
// runs the same targets): not measured, and it says why.
func TestGateFailureCatalogue(t *testing.T) {
	for _, tc := range testkit.Faults() {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			path := testkit.ConfigFile(t, testkit.FaultConfig(tc, tc.URL(t)))
			var stdout, stderr bytes.Buffer
			code := Run(context.Background(), Options{ConfigFile: path, Burst: "catalogue", StoragePath: t.TempDir(), Stdout: &stdout, Stderr: &stderr})
			if code != Unmeasured || !strings.Contains(stderr.String(), "target faulty") || !strings.Contains(stderr.String(), tc.Reason) || !strings.Contains(stderr.String(), tc.In) {
				t.Errorf("gate: exit %d, want %d, saying target faulty, %s and %q:\n%s%s", code, Unmeasured, tc.Reason, tc.In, stderr.String(), stdout.String())
			}
		})
	}
}

// A burst of tool calls and one of a response format through the gate,
// against the sim: each passes, every answer checked and good, and the
// tool-call burst's report and brief have the first tool-call delta of
// every request.
func TestGateToolsAndFormat(t *testing.T) {
	srv, _ := testkit.StartSim(t, nil)
	for name, tc := range map[string]struct{ api, fields string }{
		"tools":  {"responses", testkit.WeatherTool + ", tool_choice: required"},
		"format": {"chat", testkit.PersonFormat},
	} {
		path := testkit.ConfigFile(t, testkit.QualityConfig(testkit.QualityFault{API: tc.api, Scenario: tc.fields}, srv.URL))
		var stdout, stderr bytes.Buffer
		out := filepath.Join(t.TempDir(), "report.json")
		code := Run(context.Background(), Options{ConfigFile: path, Burst: "catalogue", Output: out, StoragePath: t.TempDir(), Stdout: &stdout, Stderr: &stderr})
		var rep report.Report
		if err := json.Unmarshal([]byte(readFile(t, out)), &rep); err != nil {
			t.Fatal(err)
		}
		tools := rep.Latency["ttft_tool"]
		wantTools := map[string]int{"tools": 6, "format": 0}[name]
		if code != Passed || rep.Goodput.Ratio == nil || *rep.Goodput.Ratio != 1 || tools.Count != wantTools || strings.Contains(stdout.String(), "ttft_tool") != (wantTools > 0) {
			t.Errorf("%s: exit %d, goodput %v, ttft_tool %d samples (want %d):\n%s%s", name, code, rep.Goodput.Ratio, tools.Count, wantTools, stderr.String(), stdout.String())
		}
	}
}

// The gate against the catalogue's wrong answers: measured, each request a
// success that is not good, goodput 0 in the report and the brief.
func TestGateQualityCatalogue(t *testing.T) {
	for _, tc := range testkit.QualityFaults() {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			srv, _ := testkit.StartSim(t, func(c *sim.Config) { c.Faults.Shaped = tc.Shaped })
			path := testkit.ConfigFile(t, testkit.QualityConfig(tc, srv.URL))
			var stdout, stderr bytes.Buffer
			out := filepath.Join(t.TempDir(), "report.json")
			code := Run(context.Background(), Options{ConfigFile: path, Burst: "catalogue", Output: out, StoragePath: t.TempDir(), Stdout: &stdout, Stderr: &stderr})
			var rep report.Report
			if err := json.Unmarshal([]byte(readFile(t, out)), &rep); err != nil {
				t.Fatal(err)
			}
			if code == Unmeasured || rep.Outcomes[prober.OutcomeSuccess] != 6 || rep.Goodput.Ratio == nil || *rep.Goodput.Ratio != 0 || !strings.Contains(stdout.String(), "ratio 0.0%") {
				t.Errorf("gate: exit %d, outcomes %v, goodput %v; want measured, 6 successes, none good:\n%s%s", code, rep.Outcomes, rep.Goodput.Ratio, stderr.String(), stdout.String())
			}
		})
	}
}

// A saturated client only adds delay: a pass holds, with what llmprobe
// added; a failure whose misses are within its own delay may be the
// client's own and is inconclusive, exit 3.
func TestSaturatedClientVerdicts(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		name  string
		share float64
		code  Outcome
		first string
	}{
		{"passed", 1, Passed, "gate: passed (llmprobe added up to 30.0ms; the target is at least this fast)"},
		{"failed", 0.5, Unmeasured, "gate: inconclusive — slo_ttft 50.0% < 99%: within llmprobe's own delay (up to 30.0ms), which may decide it, not the target"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := &report.Report{ID: "b-1", Burst: "b", Target: "sim", Requests: 40, PlannedRequests: 40,
				Outcomes: map[prober.Outcome]int{prober.OutcomeSuccess: 40}, Latency: map[string]stats.Summary{},
				Gates: []decide.Gate{{Name: "slo_ttft", Threshold: 0.99, Value: f(tc.share), Passed: tc.share >= 0.99,
					Detail: "share of requests with ttft <= 100ms", OwnDelay: 20}},
				ClientSaturated: true,
				ErrorBound:      &stats.ErrorBound{P99: f(0.02), Max: f(0.03), Limit: 0.01, Objective: "ttft 100ms of scenario s"},
			}
			report.Judge(rep, nil, nil)
			var stdout, stderr bytes.Buffer
			g := &gateRun{Options: Options{Stdout: &stdout, Stderr: &stderr}}
			code := g.verdict(context.Background(), config.Target{Name: "sim"}, rep, nil)
			first, _, _ := strings.Cut(stdout.String(), "\n")
			if code != tc.code || first != tc.first {
				t.Errorf("exit %d, first line\n%s\nwant exit %d and\n%s\n%s", code, first, tc.code, tc.first, stderr.String())
			}
			if tc.code == Unmeasured && (!strings.Contains(stdout.String(), "INCONCLUSIVE  slo_ttft") || !strings.Contains(stderr.String(), "inconclusive: slo_ttft 50.0% < 99%: within llmprobe's own delay")) {
				t.Errorf("the failing gate is reported as the target's:\n%s%s", stdout.String(), stderr.String())
			}
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
