package report

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
)

func f(v float64) *float64 { return &v }

func scenarioWith(name string, slo config.SLO) config.Scenario {
	return config.Scenario{Name: name, SLO: slo}
}

func millis(d float64) time.Duration { return time.Duration(d * float64(time.Millisecond)) }

// The limit is a tenth of the tightest threshold of any objective of any
// of the burst's scenarios, or of 50 ms where none is set.
func TestSaturationLimit(t *testing.T) {
	for _, tc := range []struct {
		name      string
		scenarios []config.Scenario
		limit     time.Duration
		objective string
	}{
		{"no scenario", nil, 5 * time.Millisecond, "no objective is set: 50ms stands in"},
		{"no objective", []config.Scenario{scenarioWith("a", config.SLO{TargetRatio: 0.9})}, 5 * time.Millisecond, "no objective is set: 50ms stands in"},
		{"ttft only", []config.Scenario{scenarioWith("a", config.SLO{TTFT: config.Duration(millis(100))})}, 10 * time.Millisecond, "ttft 100ms of scenario a"},
		{"tpot tighter than ttft", []config.Scenario{scenarioWith("a", config.SLO{TTFT: config.Duration(millis(500)), TPOT: config.Duration(millis(40)), E2E: config.Duration(5 * time.Second)})},
			4 * time.Millisecond, "tpot 40ms of scenario a"},
		{"across scenarios", []config.Scenario{
			scenarioWith("long", config.SLO{TTFT: config.Duration(time.Second)}),
			scenarioWith("short", config.SLO{Stall: config.Duration(millis(300)), E2E: config.Duration(millis(800))}),
		}, 30 * time.Millisecond, "stall 300ms of scenario short"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			limit, objective := saturationLimit(tc.scenarios)
			if limit != tc.limit || objective != tc.objective {
				t.Errorf("limit %s (%s), want %s (%s)", limit, objective, tc.limit, tc.objective)
			}
		})
	}
}

// The decision: saturated when the bound's p99 passes the limit; where the
// read side was not sampled, when the dispatch delay alone does; never
// without samples.
func TestClientSaturatedDecision(t *testing.T) {
	ttft100 := []config.Scenario{scenarioWith("a", config.SLO{TTFT: config.Duration(millis(100))})} // limit 10 ms
	dispatch := func(p99, max float64) Summary { return Summary{Count: 30, P99: p99, Max: max} }
	rt := func(sched, gc float64) *RuntimeDelays {
		r := &RuntimeDelays{SchedLatency: Tail{Count: 500, P99: f(sched), Max: f(4 * sched)}}
		if gc > 0 {
			r.GCPause = Tail{Count: 2, P99: f(gc), Max: f(gc)}
		}
		return r
	}
	for _, tc := range []struct {
		name      string
		dispatch  Summary
		runtime   *RuntimeDelays
		scenarios []config.Scenario
		p99       *float64 // the bound's, nil for n/a
		saturated bool
	}{
		{"a quiet run", dispatch(0.00002, 0.0001), rt(0.0002, 0.0003), ttft100, f(0.00052), false},
		{"one late release passes the old 5 ms but not a tenth of 100 ms", dispatch(0.007, 0.009), rt(0.0002, 0), ttft100, f(0.0072), false},
		{"the read side alone passes", dispatch(0.00002, 0.0001), rt(0.012, 0), ttft100, f(0.01202), true},
		{"the parts together pass", dispatch(0.004, 0.004), rt(0.004, 0.003), ttft100, f(0.011), true},
		{"exactly at the limit is not past it", dispatch(0.004, 0.004), rt(0.006, 0), ttft100, f(0.01), false},
		{"no objective: the 5 ms fallback", dispatch(0.001, 0.001), rt(0.0045, 0), nil, f(0.0055), true},
		{"read side not sampled: the dispatch delay decides", dispatch(0.011, 0.02), nil, ttft100, nil, true},
		{"read side not sampled, dispatch within", dispatch(0.001, 0.002), nil, ttft100, nil, false},
		{"nothing measured, read side quiet", Summary{}, rt(0.0002, 0), ttft100, f(0.0002), false},
		{"nothing sampled at all", Summary{}, &RuntimeDelays{}, ttft100, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newErrorBound(tc.dispatch, tc.runtime, tc.scenarios)
			if got := e.Saturated(); got != tc.saturated {
				t.Errorf("saturated %v, want %v: %s", got, tc.saturated, (&Report{ErrorBound: e}).SaturationDetail())
			}
			switch {
			case tc.p99 == nil && e.P99 != nil:
				t.Errorf("bound p99 %g, want n/a", *e.P99)
			case tc.p99 != nil && (e.P99 == nil || abs(*e.P99-*tc.p99) > 1e-12):
				t.Errorf("bound p99 %v, want %g", e.P99, *tc.p99)
			}
			if e.P99 != nil && (e.Max == nil || *e.Max < *e.P99) {
				t.Errorf("bound max %v under its p99 %g", e.Max, *e.P99)
			}
		})
	}
}

func abs(x float64) float64 { return max(x, -x) }

// results are n successful requests of scenario s, released dispatch late.
func results(s config.Scenario, start time.Time, n int, dispatch time.Duration) []*prober.Result {
	var out []*prober.Result
	for i := range n {
		res := &prober.Result{Outcome: prober.OutcomeSuccess, Sched: start.Add(time.Duration(i) * 100 * time.Millisecond), OutputChunks: 5,
			TTFT: 50 * time.Millisecond, E2E: 90 * time.Millisecond, OutputTokens: 5, TokenSource: prober.TokensFromUsage, DispatchDelay: dispatch}
		prober.Evaluate(res, s)
		out = append(out, res)
	}
	return out
}

func boundBurst() (config.Burst, []config.Scenario) {
	b := config.DefaultBurst
	b.Name, b.Target = "b", "t"
	b.Scenarios = []config.WeightedScenario{{Scenario: "s", Weight: 1}}
	return b, []config.Scenario{scenarioWith("s", config.SLO{TTFT: config.Duration(millis(100)), TargetRatio: 0.9})}
}

// The bound travels through the JSON report and shows in every output; a
// report from before the bound still loads and says n/a.
func TestErrorBoundInReportAndOutputs(t *testing.T) {
	b, scenarios := boundBurst()
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	rt := &RuntimeDelays{SchedLatency: Tail{Count: 812, P99: f(0.000384), Max: f(0.003072)}, GCPause: Tail{Count: 3, P99: f(0.000229376), Max: f(0.000229376)}}
	run := Run{Rate: 10, Start: start, End: start.Add(3 * time.Second), Planned: 30, Results: results(scenarios[0], start, 30, 20*time.Microsecond), Runtime: rt}
	rep := Build(b, run, Meta{Scenarios: scenarios})
	rep.Judge(nil)
	if rep.ClientSaturated || rep.ErrorBound == nil || rep.ErrorBound.P99 == nil {
		t.Fatalf("saturated %v, bound %+v", rep.ClientSaturated, rep.ErrorBound)
	}
	if want := 0.00002 + 0.000384 + 0.000229376; abs(*rep.ErrorBound.P99-want) > 1e-12 {
		t.Errorf("bound p99 %g, want %g", *rep.ErrorBound.P99, want)
	}

	raw, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.ErrorBound, rep.ErrorBound) || back.ClientSaturated != rep.ClientSaturated {
		t.Errorf("round trip: %+v, want %+v", back.ErrorBound, rep.ErrorBound)
	}

	var text, md, xml bytes.Buffer
	back.WriteText(&text)
	if err := back.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := back.WriteJUnit(&xml); err != nil {
		t.Fatal(err)
	}
	bound := "client error bound p99 633.4µs max 3.32ms = dispatch delay (p99 20.0µs, max 20.0µs) + scheduling latency (p99 384.0µs, max 3.07ms, n=812) + GC pauses (p99 229.4µs, max 229.4µs, n=3)"
	check := "error bound p99 633.4µs ≤ 10.00ms, a tenth of the tightest objective (ttft 100ms of scenario s)"
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String(), "junit": xml.String()} {
		for _, want := range []string{bound, check} {
			if !strings.Contains(out, want) {
				t.Errorf("%s output lacks %q:\n%s", name, want, out)
			}
		}
	}
	if strings.Contains(text.String(), "WARN") {
		t.Errorf("a quiet run warns:\n%s", text.String())
	}

	// A report written before the bound: no error_bound in its JSON.
	var old map[string]any
	_ = json.Unmarshal(raw, &old)
	delete(old, "error_bound")
	oldRaw, _ := json.Marshal(old)
	var legacy Report
	if err := json.Unmarshal(oldRaw, &legacy); err != nil {
		t.Fatal(err)
	}
	text.Reset()
	legacy.WriteText(&text)
	if legacy.ErrorBound != nil || !strings.Contains(text.String(), "client error bound n/a") {
		t.Errorf("an old report: bound %+v, text:\n%s", legacy.ErrorBound, text.String())
	}
}

// A saturated run says so, with the bound against its limit.
func TestSaturatedRunWarns(t *testing.T) {
	b, scenarios := boundBurst()
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	rt := &RuntimeDelays{SchedLatency: Tail{Count: 90, P99: f(0.024576), Max: f(0.04096)}}
	rep := Build(b, Run{Rate: 10, Start: start, End: start.Add(3 * time.Second), Planned: 30, Results: results(scenarios[0], start, 30, 3*time.Millisecond), Runtime: rt}, Meta{Scenarios: scenarios})
	rep.Judge(nil)
	if !rep.ClientSaturated {
		t.Fatalf("not saturated: %s", rep.SaturationDetail())
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	want := "WARN  client saturated: error bound p99 27.58ms > 10.00ms, a tenth of the tightest objective (ttft 100ms of scenario s); these numbers describe the prober"
	if !strings.Contains(text.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, text.String())
	}
	var found bool
	for _, c := range rep.Checks() {
		if c.Name == "client_saturation" {
			found = c.Status == StatusWarning && strings.Contains(c.Detail, "27.58ms > 10.00ms")
		}
	}
	if !found {
		t.Errorf("no saturation warning among the checks: %+v", rep.Checks())
	}
}

// A sweep's bound is the worst of its steps', and its client saturated if
// any step's did, whichever step's report it carries.
func TestSweepBoundIsTheWorstStep(t *testing.T) {
	b, scenarios := boundBurst()
	b.Sweep = &config.Sweep{Rates: []float64{5, 10}}
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	sweep := NewSweep(b, Meta{Scenarios: scenarios})
	quiet := &RuntimeDelays{SchedLatency: Tail{Count: 100, P99: f(0.0002), Max: f(0.001)}}
	busy := &RuntimeDelays{SchedLatency: Tail{Count: 100, P99: f(0.02), Max: f(0.05)}, GCPause: Tail{Count: 1, P99: f(0.001), Max: f(0.001)}}
	if !sweep.Add(Run{Rate: 5, Start: start, End: start.Add(3 * time.Second), Planned: 30, Results: results(scenarios[0], start, 30, 0), Runtime: quiet}) {
		t.Fatal("the quiet step did not pass")
	}
	later := start.Add(time.Minute)
	sweep.Add(Run{Rate: 10, Start: later, End: later.Add(3 * time.Second), Planned: 30, Results: results(scenarios[0], later, 30, time.Millisecond), Runtime: busy})
	rep := sweep.Report()
	if len(rep.Sweep) != 2 || rep.Sweep[0].ClientSaturated || !rep.Sweep[1].ClientSaturated || rep.Sweep[1].ErrorBoundP99 == nil || rep.Sweep[0].ErrorBoundMax == nil {
		t.Fatalf("steps %+v", rep.Sweep)
	}
	if !rep.ClientSaturated || rep.ErrorBound.P99 == nil || *rep.ErrorBound.P99 != *rep.Sweep[1].ErrorBoundP99 ||
		rep.ErrorBound.Runtime.SchedLatency.Count != 200 || *rep.ErrorBound.Runtime.GCPause.P99 != 0.001 {
		t.Errorf("sweep report: saturated %v, bound %+v; want the busy step's", rep.ClientSaturated, rep.ErrorBound)
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	if !strings.Contains(text.String(), "error bound p99 22.00ms") || !strings.Contains(text.String(), "(client saturated)") {
		t.Errorf("the sweep lines lack the steps' bounds:\n%s", text.String())
	}
}
