package render_test

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/reporttest"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/render"
)

// The report summarises each component over the requests that had it, and
// the shares of the whole TTFT add up to 1; the text report prints the
// table, and a report without a split says n/a.
func TestTTFTBreakdownInReport(t *testing.T) {
	b, scenarios := reporttest.Burst()
	start := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	res := reporttest.Results(scenarios[0], start, 10, 0)
	for i, r := range res {
		// 50 ms TTFT: 1 ms connect, then either the engine's split or none.
		if i < 6 {
			r.Engine = &prober.EngineTimings{Source: prober.TimingsVLLM}
			r.TTFTParts = []prober.TTFTPart{{Component: prober.ComponentDispatch, D: 0}, {Component: prober.ComponentConnect, D: reporttest.Millis(1)},
				{Component: prober.ComponentEngineQueue, D: reporttest.Millis(10)}, {Component: prober.ComponentEnginePrefill, D: reporttest.Millis(38)}, {Component: prober.ComponentNetwork, D: reporttest.Millis(1)}}
		} else {
			r.TTFTParts = []prober.TTFTPart{{Component: prober.ComponentDispatch, D: 0}, {Component: prober.ComponentConnect, D: reporttest.Millis(1)}, {Component: prober.ComponentServerOther, D: reporttest.Millis(49)}}
		}
	}
	rep := report.Build(b, report.Run{Rate: 10, Start: start, End: start.Add(time.Second), Planned: 10, Results: res}, report.Meta{Scenarios: scenarios})
	bd := rep.TTFTBreakdown
	if bd == nil || bd.Requests != 10 || bd.EngineTimings[prober.TimingsVLLM] != 6 {
		t.Fatalf("breakdown %+v", bd)
	}
	var names []string
	share := 0.0
	for _, c := range bd.Components {
		names = append(names, c.Component)
		share += c.Share
	}
	if got := strings.Join(names, ","); got != "dispatch,connect,engine_queue,engine_prefill,network,server_other" {
		t.Errorf("components %s", got)
	}
	if math.Abs(share-1) > 1e-9 {
		t.Errorf("shares add up to %v", share)
	}
	for _, c := range bd.Components {
		switch c.Component {
		case prober.ComponentEngineQueue:
			if c.Summary.Count != 6 || math.Abs(c.Summary.P99-0.010) > 1e-12 || math.Abs(c.Share-0.06/0.5) > 1e-9 {
				t.Errorf("engine_queue %+v", c)
			}
		case prober.ComponentServerOther:
			if c.Summary.Count != 4 || math.Abs(c.Summary.P50-0.049) > 1e-12 {
				t.Errorf("server_other %+v", c)
			}
		}
	}

	raw, _ := json.Marshal(rep)
	var back report.Report
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	render.Text(&text, &back)
	for _, want := range []string{"TTFT split over 10 requests; engine timings from 6 of 10 requests (vllm_metrics 6)", "engine_queue", "10.0ms", "server_other"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}

	// No split at all: the report says so, never a table of zeros.
	for _, r := range res {
		r.TTFTParts, r.Engine = nil, nil
	}
	rep = report.Build(b, report.Run{Rate: 10, Start: start, End: start.Add(time.Second), Planned: 10, Results: res}, report.Meta{Scenarios: scenarios})
	text.Reset()
	render.Text(&text, rep)
	if rep.TTFTBreakdown != nil || !strings.Contains(text.String(), "TTFT split: n/a") {
		t.Errorf("breakdown %+v; text:\n%s", rep.TTFTBreakdown, text.String())
	}
	if raw, _ := json.Marshal(rep); bytes.Contains(raw, []byte("ttft_breakdown")) {
		t.Error("an empty breakdown is written")
	}
}

// Without engine timings the table says why the server side is one part,
// and suggests vLLM's flags only to a vLLM target.
func TestBreakdownWithoutEngineTimingsSaysWhy(t *testing.T) {
	b := &report.TTFTBreakdown{Requests: 3, EngineTimings: map[string]int{}}
	if got := render.PageOf(&report.Report{TTFTBreakdown: b, Engine: "vllm"}).EngineTimingsText; !strings.Contains(got, "none of 3 requests") || !strings.Contains(got, "--enable-per-request-metrics") {
		t.Errorf("vllm: %q", got)
	}
	if got := render.PageOf(&report.Report{TTFTBreakdown: b, Engine: "sglang"}).EngineTimingsText; !strings.Contains(got, "sglang reports no per-request timings") || strings.Contains(got, "include_metrics") {
		t.Errorf("sglang: %q, want no vLLM flag", got)
	}
}

// The answer-token TTFT of a reasoning model's burst covers the requests
// that reasoned; a burst without reasoning says n/a and lists no regression
// of it.
func TestAnswerTTFTInReport(t *testing.T) {
	b, scenarios := reporttest.Burst()
	start := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	plain := report.Build(b, report.Run{Rate: 10, Start: start, End: start.Add(time.Second), Planned: 10, Results: reporttest.Results(scenarios[0], start, 10, 0)}, report.Meta{Scenarios: scenarios})
	res := reporttest.Results(scenarios[0], start, 10, 0)
	for i, r := range res[:4] {
		r.ReasoningTokens, r.AnswerTokens, r.TTFTReasoning, r.TTFTAnswer = 5, 3, r.TTFT, reporttest.Millis(float64(100*(i+1)))
	}
	rep := report.Build(b, report.Run{Rate: 10, Start: start, End: start.Add(time.Second), Planned: 10, Results: res}, report.Meta{Scenarios: scenarios})
	if s := rep.Latency["ttft_answer"]; s.Count != 4 || math.Abs(s.Max-0.4) > 1e-9 {
		t.Errorf("ttft_answer %+v: want the 4 requests that reasoned, max 400ms", s)
	}
	if s := plain.Latency["ttft_answer"]; s.Count != 0 {
		t.Errorf("ttft_answer without reasoning %+v, want n/a", s)
	}
	var text bytes.Buffer
	render.Text(&text, plain)
	if !regexp.MustCompile(`ttft_answer +0 +n/a`).MatchString(text.String()) {
		t.Errorf("text report without reasoning lacks 'ttft_answer 0 n/a':\n%s", text.String())
	}
	report.Judge(plain, plain, b.MaxRegression)
	for _, m := range plain.Regression.Metrics {
		if m.Metric == "ttft_answer" {
			t.Errorf("regression lists ttft_answer though neither run reasoned: %+v", m)
		}
	}
	report.Judge(rep, plain, b.MaxRegression)
	n := 0
	for _, m := range rep.Regression.Metrics {
		if m.Metric == "ttft_answer" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("regression lists ttft_answer %d times against a run without it, want p50 and p99 (n/a)", n)
	}
}
