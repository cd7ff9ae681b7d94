package web

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/stats"
)

// A report page marks each percentile from too few samples, shows each
// one's interval, and a repeated burst's figures across its runs.
func TestReportPageSaysWhatFiguresRestOn(t *testing.T) {
	runs := make([]*report.Report, 3)
	for i := range runs {
		xs := make([]float64, 20)
		for j := range xs {
			xs[j] = 0.05 + 0.001*float64(j+i)
		}
		runs[i] = &report.Report{ID: fmt.Sprintf("b-%d", i), Burst: "b", Requests: 20, PlannedRequests: 20,
			Latency: map[string]stats.Summary{"ttft": stats.Summarize(xs)}}
	}
	var page bytes.Buffer
	if err := WriteReport(&page, report.CombineRuns(runs)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<small class="bad">too few</small>`, "Too few samples: ttft: 20 samples, too few for p90, p95, p99, p99.9 (needs 36, 72, 368, 3,688)",
		`<small class="muted">57.0–66.0 ms</small>`, `<small class="muted">66.0 ms–∞</small>`,
		"Across the runs", "repeated 3 times (b-0, b-1, b-2)", "<td>ttft p50</td><td class=\"num\">60.5ms</td>",
	} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(page.String())
	}
}
