package web

import (
	"bytes"
	"html"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/stats"
)

// A saturated client's verdict carries its caveat on the report page and
// the bursts page: a pass holds (the target is at least this fast), a
// failure whose misses are within llmprobe's own delay is inconclusive;
// never a plain green "passed" beside "these numbers describe llmprobe's
// host".
func TestSaturatedVerdictCarriesItsCaveat(t *testing.T) {
	p99, maxBound := 0.02, 0.03
	for _, tc := range []struct {
		name   string
		passed bool
		wants  []string
	}{
		{"passed", true, []string{`<span class="verdict warn">passed</span>`, "passed: llmprobe added up to 30.0ms; the target is at least this fast",
			"the pass holds, since the target is at least this fast"}},
		{"failed", false, []string{`<span class="verdict warn">inconclusive</span>`, "inconclusive: slo_ttft 50.0% < 90%: within llmprobe's own delay (up to 30.0ms)",
			`<li class="warn">gate slo_ttft may have failed by llmprobe's own delay: share</li>`,
			"the misses that fail the gates are within it, request by request: inconclusive"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := *recordedReport(t)
			r.Aborted, r.ClientSaturated = false, true
			r.ErrorBound = &stats.ErrorBound{P99: &p99, Max: &maxBound, Limit: 0.01, Objective: "ttft 100ms of scenario s"}
			share := 0.5
			if tc.passed {
				share = 1
			}
			r.Gates = []decide.Gate{{Name: "slo_ttft", Threshold: 0.9, Value: &share, Passed: tc.passed, Detail: "share", OwnDelay: 3}}
			r.Passed = tc.passed && r.Requests > 0
			o := report.VerdictOf(&r)
			r.Verdict, r.VerdictReason = o.Word, o.Reason
			page := render(t, &r)
			wantAll(t, "the report page", page, tc.wants...)
			if strings.Contains(page, "describe llmprobe's host") {
				t.Error("the page says the numbers describe llmprobe's host beside its verdict")
			}
			var list bytes.Buffer
			if err := pages.ExecuteTemplate(&list, "bursts.html", []burstRow{{Name: r.Burst, Latest: &r, Badge: burstVerdict(&r)}}); err != nil {
				t.Fatal(err)
			}
			wantAll(t, "the bursts page", html.UnescapeString(list.String()), ">"+string(o.Word)+"</span> <span class=\"muted\">("+o.Reason+")</span>")
		})
	}
}
