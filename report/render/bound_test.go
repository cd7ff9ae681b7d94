package render_test

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/internal/reporttest"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/render"
	"github.com/llmprobe/llmprobe/stats"
)

// The bound travels through the JSON report and shows in every output; a
// report from before the bound still loads and says n/a.
func TestErrorBoundInReportAndOutputs(t *testing.T) {
	b, scenarios := reporttest.Burst()
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	rt := &stats.RuntimeDelays{SchedLatency: stats.Tail{Count: 812, P99: reporttest.F(0.000384), Max: reporttest.F(0.003072)}, GCPause: stats.Tail{Count: 3, P99: reporttest.F(0.000229376), Max: reporttest.F(0.000229376)}}
	run := report.Run{Rate: 10, Start: start, End: start.Add(3 * time.Second), Planned: 30, Results: reporttest.Results(scenarios[0], start, 30, 20*time.Microsecond), Runtime: rt}
	rep := report.Build(b, run, report.Meta{Scenarios: scenarios})
	report.Judge(rep, nil, b.MaxRegression)
	if rep.ClientSaturated || rep.ErrorBound == nil || rep.ErrorBound.P99 == nil {
		t.Fatalf("saturated %v, bound %+v", rep.ClientSaturated, rep.ErrorBound)
	}
	if want := 0.00002 + 0.000384 + 0.000229376; math.Abs(*rep.ErrorBound.P99-want) > 1e-12 {
		t.Errorf("bound p99 %g, want %g", *rep.ErrorBound.P99, want)
	}

	raw, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back report.Report
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.ErrorBound, rep.ErrorBound) || back.ClientSaturated != rep.ClientSaturated {
		t.Errorf("round trip: %+v, want %+v", back.ErrorBound, rep.ErrorBound)
	}

	var text, md, xml bytes.Buffer
	render.Text(&text, &back)
	if err := render.Markdown(&md, &back); err != nil {
		t.Fatal(err)
	}
	if err := render.JUnit(&xml, &back); err != nil {
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
	var legacy report.Report
	if err := json.Unmarshal(oldRaw, &legacy); err != nil {
		t.Fatal(err)
	}
	text.Reset()
	render.Text(&text, &legacy)
	if legacy.ErrorBound != nil || !strings.Contains(text.String(), "client error bound n/a") {
		t.Errorf("an old report: bound %+v, text:\n%s", legacy.ErrorBound, text.String())
	}
}

// A saturated run says so, with the bound against its limit.
func TestSaturatedRunWarns(t *testing.T) {
	b, scenarios := reporttest.Burst()
	b.SLORule = config.SLORulePoint // 30 requests cannot show 90 % by interval
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	rt := &stats.RuntimeDelays{SchedLatency: stats.Tail{Count: 90, P99: reporttest.F(0.024576), Max: reporttest.F(0.04096)}}
	rep := report.Build(b, report.Run{Rate: 10, Start: start, End: start.Add(3 * time.Second), Planned: 30, Results: reporttest.Results(scenarios[0], start, 30, 3*time.Millisecond), Runtime: rt}, report.Meta{Scenarios: scenarios})
	report.Judge(rep, nil, b.MaxRegression)
	if !rep.ClientSaturated {
		t.Fatalf("not saturated: %s", render.PageOf(rep).SaturationDetail)
	}
	var text bytes.Buffer
	render.Text(&text, rep)
	want := "WARN  client saturated: error bound p99 27.58ms > 10.00ms, a tenth of the tightest objective (ttft 100ms of scenario s); the pass holds, since llmprobe only adds delay: llmprobe added up to 44.0ms; the target is at least this fast"
	if !strings.Contains(text.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, text.String())
	}
	var found bool
	for _, c := range render.Checks(rep) {
		if c.Name == "client_saturation" {
			found = c.Status == render.StatusWarning && strings.Contains(c.Detail, "27.58ms > 10.00ms")
		}
	}
	if !found {
		t.Errorf("no saturation warning among the checks: %+v", render.Checks(rep))
	}
}

// A sweep's bound is the worst of its steps', and its client saturated if
// any step's did, whichever step's report it carries.
func TestSweepBoundIsTheWorstStep(t *testing.T) {
	b, scenarios := reporttest.Burst()
	b.Sweep = &config.Sweep{Rates: []float64{5, 10}}
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	sw := report.NewSweep(b, report.Meta{Scenarios: scenarios})
	quiet := &stats.RuntimeDelays{SchedLatency: stats.Tail{Count: 100, P99: reporttest.F(0.0002), Max: reporttest.F(0.001)}}
	busy := &stats.RuntimeDelays{SchedLatency: stats.Tail{Count: 100, P99: reporttest.F(0.02), Max: reporttest.F(0.05)}, GCPause: stats.Tail{Count: 1, P99: reporttest.F(0.001), Max: reporttest.F(0.001)}}
	if sw.Add(report.Run{Rate: 5, Start: start, End: start.Add(3 * time.Second), Planned: 40, Results: reporttest.Results(scenarios[0], start, 40, 0), Runtime: quiet}, false) != decide.Passed {
		t.Fatal("the quiet step did not pass")
	}
	later := start.Add(time.Minute)
	sw.Add(report.Run{Rate: 10, Start: later, End: later.Add(3 * time.Second), Planned: 40, Results: reporttest.Results(scenarios[0], later, 40, time.Millisecond), Runtime: busy}, false)
	rep := sw.Report()
	if len(rep.Sweep) != 2 || rep.Sweep[0].ClientSaturated || !rep.Sweep[1].ClientSaturated || rep.Sweep[1].ErrorBoundP99 == nil || rep.Sweep[0].ErrorBoundMax == nil {
		t.Fatalf("steps %+v", rep.Sweep)
	}
	if !rep.ClientSaturated || rep.ErrorBound.P99 == nil || *rep.ErrorBound.P99 != *rep.Sweep[1].ErrorBoundP99 ||
		rep.ErrorBound.Runtime.SchedLatency.Count != 200 || *rep.ErrorBound.Runtime.GCPause.P99 != 0.001 {
		t.Errorf("sweep report: saturated %v, bound %+v; want the busy step's", rep.ClientSaturated, rep.ErrorBound)
	}
	var text bytes.Buffer
	render.Text(&text, rep)
	if !strings.Contains(text.String(), "error bound p99 22.00ms") || !strings.Contains(text.String(), "(client saturated)") {
		t.Errorf("the sweep lines lack the steps' bounds:\n%s", text.String())
	}
}
