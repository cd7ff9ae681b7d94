package render_test

import (
	"bytes"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/reporttest"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/render"
)

// The time to the first tool-call delta covers the requests that called a
// function: the gate's brief shows it where a request did (or a scenario
// offers tools), the text says n/a without any, and a regression lists it
// only where a run has it.
func TestToolTTFTInReport(t *testing.T) {
	b, scenarios := reporttest.Burst()
	start := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	run := func(results int, tools bool) *report.Report {
		res := reporttest.Results(scenarios[0], start, 10, 0)
		for i, r := range res[:results] {
			r.TTFTool = reporttest.Millis(float64(50 * (i + 1)))
		}
		rep := report.Build(b, report.Run{Rate: 10, Start: start, End: start.Add(time.Second), Planned: 10, Results: res}, report.Meta{Scenarios: scenarios})
		if tools {
			rep.Scenarios[0]["tools"] = []any{map[string]any{"function": map[string]any{"name": "f"}}}
		}
		return rep
	}
	plain, called, offered := run(0, false), run(3, false), run(0, true)
	if s := called.Latency["ttft_tool"]; s.Count != 3 || math.Abs(s.Max-0.15) > 1e-9 {
		t.Errorf("ttft_tool %+v: want the 3 requests that called, max 150ms", s)
	}
	row := regexp.MustCompile(`(?m)^ *ttft_tool +(\d+) +(\S+)`)
	for name, tc := range map[string]struct {
		rep        *report.Report
		inBrief    bool
		count, p50 string
	}{"plain": {plain, false, "0", "n/a"}, "called": {called, true, "3", "100.0ms"}, "offered": {offered, true, "0", "n/a"}} {
		var brief, text bytes.Buffer
		render.Brief(&brief, tc.rep)
		render.Text(&text, tc.rep)
		if m := row.FindStringSubmatch(brief.String()); (m != nil) != tc.inBrief || m != nil && (m[1] != tc.count || m[2] != tc.p50) {
			t.Errorf("%s: brief's ttft_tool row %q, want one %v with %s samples, p50 %s:\n%s", name, m, tc.inBrief, tc.count, tc.p50, brief.String())
		}
		if m := row.FindStringSubmatch(text.String()); m == nil || m[1] != tc.count || m[2] != tc.p50 {
			t.Errorf("%s: text's ttft_tool row %q, want %s samples, p50 %s", name, m, tc.count, tc.p50)
		}
	}
	report.Judge(plain, plain, b.MaxRegression)
	report.Judge(called, plain, b.MaxRegression)
	for _, c := range []struct {
		rep  *report.Report
		want int
	}{{plain, 0}, {called, 2}} {
		n := 0
		for _, m := range c.rep.Regression.Metrics {
			if m.Metric == "ttft_tool" {
				n++
			}
		}
		if n != c.want {
			t.Errorf("regression lists ttft_tool %d times, want %d", n, c.want)
		}
	}
	if !strings.Contains(render.TooFewText(called), "ttft_tool") {
		t.Errorf("3 samples are too few for any percentile but p50: %q", render.TooFewText(called))
	}
}
