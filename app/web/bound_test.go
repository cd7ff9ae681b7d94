package web

import (
	"bytes"
	"html"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/stats"
)

func render(t *testing.T, r *report.Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteReport(&b, r); err != nil {
		t.Fatal(err)
	}
	return html.UnescapeString(b.String()) // the text as a browser shows it
}

// The report page shows the error bound beside the dispatch delay, with
// its parts and what client_saturated was decided from; a report written
// before the bound shows n/a.
func TestReportPageShowsTheErrorBound(t *testing.T) {
	old := recordedReport(t)
	page := render(t, old)
	wantAll(t, "a report without a bound", page,
		`<tr><td>error_bound</td>`, "client error bound n/a (the report predates it)", "a report without an error bound")
	if row := page[strings.Index(page, "<tr><td>error_bound</td>"):]; strings.Count(row[:strings.Index(row, "</tr>")], ">n/a<") != 2 {
		t.Errorf("the bound row of an old report: %s, want n/a for p99 and max", row[:strings.Index(row, "</tr>")])
	}

	p99, maxBound, sched, gc, dispatch := 0.0276, 0.0415, 0.0246, 0.0001, 0.003
	measured := *old
	measured.ClientSaturated = true
	measured.ErrorBound = &stats.ErrorBound{P99: &p99, Max: &maxBound, Limit: 0.01, Objective: "ttft 100ms of scenario s",
		DispatchDelay: stats.Tail{Count: 20, P99: &dispatch, Max: &dispatch},
		Runtime:       &stats.RuntimeDelays{SchedLatency: stats.Tail{Count: 90, P99: &sched, Max: &sched}, GCPause: stats.Tail{Count: 1, P99: &gc, Max: &gc}}}
	measured.Sweep = []report.SweepStep{{Rate: 10, ErrorBoundP99: &p99, ClientSaturated: true}, {Rate: 20}}
	page = render(t, &measured)
	wantAll(t, "a saturated report", page,
		"<td class=\"num\">27.6 ms</td><td class=\"num\">–</td><td class=\"num\">–</td><td class=\"num\">41.5 ms</td>",
		"client error bound p99 27.60ms max 41.50ms = dispatch delay (p99 3.00ms, max 3.00ms) + scheduling latency (p99 24.60ms, max 24.60ms, n=90) + GC pauses (p99 100.0µs, max 100.0µs, n=1)",
		"The prober was saturated (error bound p99 27.60ms > 10.00ms, a tenth of the tightest objective (ttft 100ms of scenario s))",
		"<td class=\"num\">27.6 ms</td>", ", client saturated</td>")
}
