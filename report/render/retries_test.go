package render_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/reporttest"
	"github.com/llmprobe/llmprobe/prober/transport"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/render"
)

// Requests sent again on a new connection (a server that closed the reused
// one) succeed, and the report still says how many there were and why.
func TestRetriesAreCounted(t *testing.T) {
	b, scenarios := reporttest.Burst()
	start := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	results := reporttest.Results(scenarios[0], start, 30, 0)
	results[3].Timings.Retry = transport.RetryClosedIdle
	results[7].Timings.Retry = transport.RetryClosedIdle
	results[9].Timings.Retry = transport.RetryEOF
	rep := report.Build(b, report.Run{Rate: 10, Start: start, End: start.Add(3 * time.Second), Planned: 30, Results: results}, report.Meta{Scenarios: scenarios})

	raw, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"retries":{"eof":1,"server_closed_idle":2}`) {
		t.Errorf("the JSON lacks the retries by reason: %s", raw)
	}
	var text, md bytes.Buffer
	render.Brief(&text, rep)
	want := "3 sent again on a new connection, the reused one closed before any byte (eof 1, server_closed_idle 2)"
	if !strings.Contains(text.String(), want) {
		t.Errorf("the gate text lacks %q:\n%s", want, text.String())
	}
	if err := render.Markdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), want) {
		t.Errorf("the Markdown lacks %q:\n%s", want, md.String())
	}

	if got := render.PageOf(rep).RetriesText; !strings.Contains(got, want) {
		t.Errorf("the report page's requests line lacks %q: %q", want, got)
	}

	rep = report.Build(b, report.Run{Rate: 10, Start: start, End: start.Add(3 * time.Second), Planned: 30, Results: reporttest.Results(scenarios[0], start, 30, 0)}, report.Meta{Scenarios: scenarios})
	text.Reset()
	render.Brief(&text, rep)
	if strings.Contains(text.String(), "sent again") {
		t.Errorf("a run without retries mentions them:\n%s", text.String())
	}
}
