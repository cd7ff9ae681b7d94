package web

import (
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/stats"
)

// The report page shows where TTFT went, component by component with its
// meaning and share; a report without a split says n/a.
func TestReportPageShowsTheTTFTSplit(t *testing.T) {
	old := recordedReport(t)
	old.TTFTBreakdown = nil
	if page := render(t, old); !strings.Contains(page, `<section id="ttft-split">`) || !strings.Contains(page, "n/a: no successful request was split") {
		t.Error("a report without a split does not say n/a")
	}
	split := *old
	split.TTFTBreakdown = &report.TTFTBreakdown{Requests: 20, EngineTimings: map[string]int{prober.TimingsVLLM: 20}, Components: []report.ComponentSummary{
		{Component: prober.ComponentEngineQueue, Summary: stats.Summarize([]float64{0.010, 0.030}), Share: 0.25},
		{Component: prober.ComponentEnginePrefill, Summary: stats.Summarize([]float64{0.050, 0.070}), Share: 0.75},
	}}
	page := render(t, &split)
	wantAll(t, "a split report", page, "Engine timings from 20 of 20 requests (vllm_metrics 20)",
		"<td>engine_queue</td><td class=\"muted\">waiting in the engine to be scheduled (engine's figure)</td><td class=\"num\">2</td>",
		"<td class=\"num\">25.0%</td>", "<td class=\"num\">75.0%</td>")
}

// A report with conversations shows TTFT by turn; one without has no such section.
func TestReportPageShowsTurns(t *testing.T) {
	old := recordedReport(t)
	old.Turns = nil
	if page := render(t, old); strings.Contains(page, `id="turns"`) {
		t.Error("a report without conversations has a turn section")
	}
	cached := 96.0
	prompt := 1168.0
	withTurns := *old
	withTurns.Turns = []report.TurnSummary{{Scenario: "chat", Turn: 2, Requests: 3, Succeeded: 2, TTFT: stats.Summarize([]float64{0.05, 0.07}), PromptTokens: &prompt, CachedTokens: &cached},
		{Scenario: "chat", Turn: 3, Requests: 1, TTFT: stats.Summarize(nil)}}
	withTurns.PromptCache = &report.PromptCache{Requests: 2, PromptTokens: 2000, CachedTokens: 500, HitRatio: 0.25}
	page := render(t, &withTurns)
	wantAll(t, "a report with turns", page, "prefix cache: 25.0% of prompt tokens served from the engine's cache (500 of 2000,", `<section id="turns">`, "<th>cached tokens</th>",
		`<tr><td>chat</td><td class="num">2</td><td class="num">2/3</td><td class="num">60.0ms</td>`, `<td class="num">1168</td><td class="num">96</td></tr>`,
		`<td class="num">0/1</td><td class="num">n/a</td>`)
}
