package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/llmprobe/llmprobe/app/web/chart"
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/lib/figure"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
	reportrender "github.com/llmprobe/llmprobe/report/render"
	"github.com/llmprobe/llmprobe/stats"
)

// WriteReport writes one burst report as a complete HTML page that needs
// nothing else: inline CSS, inline SVG charts, no script and no fetch. It is
// what `llmprobe report show` writes to a file; /bursts/<id> serves the same
// view with links to the other reports.
func WriteReport(w io.Writer, r *report.Report) error {
	return writeReport(w, r, false)
}

// writeReport renders the page whole before writing, so an error never
// leaves half a page behind. linked adds links into the server's pages.
func writeReport(w io.Writer, r *report.Report, linked bool) error {
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, "report.html", newReportView(r, linked)); err != nil {
		return fmt.Errorf("rendering report %s: %w", r.ID, err)
	}
	_, err := buf.WriteTo(w)
	return err
}

// reportView is a report with every figure formatted for reading.
type reportView struct {
	*report.Report
	reportrender.Page
	Linked         bool
	Badge          verdict
	Latency        []latencyRow
	Bound          boundRow
	Breakdown      []breakdownRow
	Outcomes       []outcomeRow
	RegressionRows []regressionRow
	Charts         charts
	Config         string
	EngineView     engineView
	SweepRows      []sweepRow
}

// verdict is a burst's one-word result, a CSS class and why; Caveat is
// what a saturated client's pass or failure means.
type verdict struct {
	Text, Class, Caveat string
	Why                 []why
}

// why is one reason of a verdict, in the colour of what it is: a failure
// (bad), or not enough evidence or llmprobe's own delay (warn).
type why struct{ Text, Class string }

func burstVerdict(r *report.Report) verdict {
	v := verdict{Text: "passed", Class: "ok"}
	if !r.Passed {
		v = verdict{Text: "failed", Class: "bad"}
	}
	switch o := report.VerdictOf(r); {
	case r.ClientSaturated && (o.Word == decide.Passed || o.Word == decide.Inconclusive),
		o.Word == decide.Inconclusive, o.Word == decide.NotEnough, o.Word == decide.NothingJudged:
		v = verdict{Text: string(o.Word), Class: "warn", Caveat: o.Reason}
	}
	if r.Aborted {
		v = verdict{Text: "aborted", Class: "bad", Why: []why{{"stopped before its end: " + r.AbortReason, "bad"}}}
	}
	if r.Requests == 0 {
		v.Why = append(v.Why, why{"no request was measured", "warn"})
	}
	for _, g := range r.Gates {
		switch {
		case g.Undecided:
			v.Why = append(v.Why, why{"gate " + g.Name + " has not enough evidence: " + g.Detail, "warn"})
		case !g.Passed && !g.Skipped && (g.OwnDelay > 0 || g.OwnDelayDecides):
			v.Why = append(v.Why, why{"gate " + g.Name + " may have failed by llmprobe's own delay: " + g.Detail, "warn"})
		case !g.Passed && !g.Skipped:
			v.Why = append(v.Why, why{"gate " + g.Name + " failed: " + g.Detail, "bad"})
		}
	}
	if r.Sweep != nil && r.MaxRateUnderSLO == nil {
		v.Why = append(v.Why, why{"no rate of the sweep held the SLO", "bad"})
	}
	return v
}

// latencyRow is one metric's exact percentiles in milliseconds, "n/a" each
// without samples.
type latencyRow struct {
	Metric, Meaning          string
	Count                    int
	P50, P90, P95, P99, P999 pctCell
	Mean, Max                string
}

// pctCell is one percentile with its 95 % interval ("" where the report
// has none) and whether it rests on too few samples.
type pctCell struct {
	Value, Interval string
	TooFew          bool
	// Worth is what its samples are worth as independent ones, where
	// fewer than counted (batch means); 0 otherwise.
	Worth int
}

// tooFewMark is " (too few)" for a percentile from too few samples.
func tooFewMark(s stats.Summary, name string) string {
	if s.IsTooFew(name) {
		return " (too few)"
	}
	return ""
}

func newPctCell(s stats.Summary, name string) pctCell {
	c := pctCell{Value: msFigure(s.Quantile(name), s.Count > 0), TooFew: s.IsTooFew(name)}
	if w := s.Worth(name); w < s.Count {
		c.Worth = w
	}
	if i, ok := s.Intervals[name]; ok && s.Count > 0 {
		lo, hi := "−∞", "∞"
		if i.Lo != nil {
			lo = msFigure(*i.Lo, true)
		}
		if i.Hi != nil {
			hi = msFigure(*i.Hi, true)
		}
		if strings.HasSuffix(lo, " ms") && strings.HasSuffix(hi, " ms") {
			lo = strings.TrimSuffix(lo, " ms") // one unit for both ends: "46.1–48.8 ms"
		}
		c.Interval = lo + "–" + hi
	}
	return c
}

var metricMeaning = map[string]string{
	"ttft":           "time to first token",
	"tpot":           "time per output token after the first",
	"itl":            "inter-token latency, one per token",
	"e2e":            "whole request",
	"dispatch_delay": "the prober's own lateness in sending",
	"ttft_answer":    "to the first answer token, after a reasoning model's reasoning",
	"ttft_tool":      "to the first tool-call delta, of requests that called a function",
}

func latencyRows(r *report.Report) []latencyRow {
	var rows []latencyRow
	for _, m := range config.BurstMetrics {
		s := r.Latency[m]
		ms := func(v float64) string { return msFigure(v, s.Count > 0) }
		rows = append(rows, latencyRow{
			Metric: m, Meaning: metricMeaning[m], Count: s.Count,
			P50: newPctCell(s, "p50"), P90: newPctCell(s, "p90"), P95: newPctCell(s, "p95"), P99: newPctCell(s, "p99"), P999: newPctCell(s, "p99.9"),
			Mean: ms(s.Mean), Max: ms(s.Max),
		})
	}
	return rows
}

// componentMeaning says what each TTFT component is, for the split table.
var componentMeaning = map[string]string{
	prober.ComponentDispatch:      "the prober's lateness in letting the request go",
	prober.ComponentClientQueue:   "waiting for the burst's concurrency cap",
	prober.ComponentConnect:       "pool wait, DNS, connect, TLS and writing the request",
	prober.ComponentEngineQueue:   "waiting in the engine to be scheduled (engine's figure)",
	prober.ComponentEnginePrefill: "scheduling to first token (engine's figure)",
	prober.ComponentNetwork:       "the rest: network both ways, HTTP stack, tokenisation",
	prober.ComponentServerOther:   "server side the engine did not split",
}

// breakdownRow is one TTFT component's figures in milliseconds and its share.
type breakdownRow struct {
	Component, Meaning  string
	Count               int
	P50, P90, P99, Mean string
	Share               string
}

func breakdownRows(b *report.TTFTBreakdown) []breakdownRow {
	if b == nil {
		return nil
	}
	rows := make([]breakdownRow, 0, len(b.Components))
	for _, c := range b.Components {
		s := c.Summary
		ms := func(v float64) string { return msFigure(v, s.Count > 0) }
		rows = append(rows, breakdownRow{Component: c.Component, Meaning: componentMeaning[c.Component], Count: s.Count,
			P50: ms(s.P50), P90: ms(s.P90) + tooFewMark(s, "p90"), P99: ms(s.P99) + tooFewMark(s, "p99"), Mean: ms(s.Mean), Share: fmt.Sprintf("%.1f%%", 100*c.Share)})
	}
	return rows
}

// boundRow is the client's error bound beside the latencies it bounds:
// its p99 and max, "n/a" each where the report has none.
type boundRow struct{ P99, Max string }

func newBoundRow(e *stats.ErrorBound) boundRow {
	if e == nil {
		return boundRow{"n/a", "n/a"}
	}
	return boundRow{msFigure(deref(e.P99), e.P99 != nil), msFigure(deref(e.Max), e.Max != nil)}
}

// msFigure is seconds as the pages print them, or "n/a" without samples.
func msFigure(seconds float64, ok bool) string {
	if !ok {
		return "n/a"
	}
	return figure.PageMs(seconds)
}

// outcomeRow is how many planned requests ended one way.
type outcomeRow struct {
	Outcome string
	Count   int
	Share   string
	OK      bool
	Reason  string // the failures' phases and reasons, or why not sent
}

func outcomeRows(r *report.Report) []outcomeRow {
	share := func(n int) string {
		if r.PlannedRequests == 0 {
			return "n/a"
		}
		return scaled(float64(n)/float64(r.PlannedRequests), 100, 1, "%")
	}
	why := map[prober.Outcome][]string{}
	for _, f := range r.Failures {
		why[f.Outcome] = append(why[f.Outcome], fmt.Sprintf("%s: %s (%d)", f.Phase, f.Reason, f.Count))
	}
	var rows []outcomeRow
	for o, n := range r.Outcomes {
		row := outcomeRow{Outcome: string(o), Count: n, Share: share(n), OK: o == prober.OutcomeSuccess, Reason: "–"}
		switch {
		case o == prober.OutcomeCancelled:
			row.Reason = "stopped by llmprobe (the burst ended or was interrupted); says nothing about the target"
		case why[o] != nil:
			row.Reason = strings.Join(why[o], "; ")
		case !row.OK:
			row.Reason = "n/a: the report keeps the first kinds of failure only"
		}
		rows = append(rows, row)
	}
	sort.Slice(rows, func(i, j int) bool {
		return rows[i].Count > rows[j].Count || rows[i].Count == rows[j].Count && rows[i].Outcome < rows[j].Outcome
	})
	for _, ns := range r.NotSent {
		rows = append(rows, outcomeRow{Outcome: "not sent", Count: ns.Count, Share: share(ns.Count), Reason: ns.Reason})
	}
	return rows
}

// regressionRow is one metric against the baseline.
type regressionRow struct {
	Metric, Quantile, Baseline, Current, Ratio, Change, PValue, Test string
	Significant, Worse                                               bool
}

func regressionRows(g *report.Regression) []regressionRow {
	if g == nil {
		return nil
	}
	var rows []regressionRow
	for _, m := range g.Metrics {
		row := regressionRow{
			Metric: m.Metric, Quantile: m.Quantile,
			Baseline: msFigure(deref(m.Previous), m.Previous != nil), Current: msFigure(deref(m.Current), m.Current != nil),
			Ratio: "n/a", Change: "n/a", PValue: "n/a",
			Test: "not tested: the report keeps samples of ttft and tpot only", Significant: m.Significant,
		}
		if m.Ratio != nil {
			row.Ratio = fmt.Sprintf("×%.3f", *m.Ratio)
			row.Change = fmt.Sprintf("%+.1f%%", 100*(*m.Ratio-1))
			row.Worse = *m.Ratio > 1
		}
		if m.PValue != nil {
			row.PValue = pValue(m.PValue)
			row.Test = "no significant change (p ≥ 0.05)"
			if m.Significant {
				row.Test = "significant change (p < 0.05)"
			}
		}
		rows = append(rows, row)
	}
	return rows
}

func deref(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}

func newReportView(r *report.Report, linked bool) reportView {
	v := reportView{
		Report: r, Page: reportrender.PageOf(r), Linked: linked, Badge: burstVerdict(r),
		Latency: latencyRows(r), Bound: newBoundRow(r.ErrorBound), Breakdown: breakdownRows(r.TTFTBreakdown), Outcomes: outcomeRows(r), RegressionRows: regressionRows(r.Regression),
		EngineView: newEngineView(r.EngineMetrics),
	}
	v.SweepRows = sweepRows(r)
	v.Charts = newCharts(r)
	for _, c := range []*chart.Chart{chart.Sweep(r), chart.Curve(r, "ttft"), chart.Curve(r, "tpot"), chart.Frontier(r)} {
		if c != nil {
			v.Charts.Sweep = append(v.Charts.Sweep, c)
		}
	}
	cfg := map[string]any{"burst": r.Config, "scenarios": r.Scenarios}
	if b, err := json.MarshalIndent(cfg, "", "  "); err == nil {
		v.Config = string(b)
	}
	return v
}

// charts are a report's charts by what they show, and in words why one
// is not drawn.
type charts struct {
	Percentiles    []*chart.Chart
	PercentilesNA  string // "ttft, tpot, itl": metrics without samples
	PercentilesWhy string // why they have none
	TTFT           *chart.Chart
	TTFTNA         string // why there is no TTFT over time
	Sweep          []*chart.Chart
}

func newCharts(r *report.Report) charts {
	var c charts
	var na []string
	c.Percentiles, na = chart.Percentiles(r)
	c.PercentilesNA, c.PercentilesWhy = strings.Join(na, ", "), "no request gave a sample"
	noFirstToken := "no request had a first token (embeddings, rerank and unstreamed answers have none)"
	if r.Latency["e2e"].Count > 0 && r.Latency["ttft"].Count == 0 {
		c.PercentilesWhy = noFirstToken
	}
	if c.TTFT = chart.TTFT(r); c.TTFT == nil {
		switch {
		case r.Outcomes[prober.OutcomeSuccess] == 0:
			c.TTFTNA = "n/a: no request succeeded"
		case r.Latency["ttft"].Count == 0:
			c.TTFTNA = "n/a: " + noFirstToken
		default:
			c.TTFTNA = "n/a: the report keeps no TTFT series"
		}
	}
	return c
}

// gpuNames says which GPUs, "2 × NVIDIA H100" for a uniform node.
func gpuNames(g *report.GPUFacts) string {
	if len(g.Names) == 0 {
		return "n/a (NVML named none)"
	}
	counts := map[string]int{}
	var order []string
	for _, n := range g.Names {
		if counts[n] == 0 {
			order = append(order, n)
		}
		counts[n]++
	}
	parts := make([]string, len(order))
	for i, n := range order {
		parts[i] = fmt.Sprintf("%d × %s", counts[n], n)
	}
	return strings.Join(parts, ", ")
}
