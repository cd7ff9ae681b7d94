package render

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/llmprobe/llmprobe/enginemetrics"
	"github.com/llmprobe/llmprobe/lib/figure"
	"github.com/llmprobe/llmprobe/report"
)

// Bucket says where a server quantile lies, "" for a mean.
func Bucket(c report.EngineComparison) string {
	if q, ok := c.ServerQuantile(); ok {
		return "in its bucket " + q.Bucket()
	}
	return ""
}

// ServerFigure is a comparison row's server figure as exact as it is: a
// mean as a value, a percentile as its estimate in its bucket.
func ServerFigure(c report.EngineComparison) string {
	if q, ok := c.ServerQuantile(); ok {
		return q.Text()
	}
	if c.Server == nil {
		return "n/a"
	}
	return figure.Ms(*c.Server) + " (exact)"
}

// EngineSummary is the engine section's one line for pages and logs.
func EngineSummary(e *report.EngineMetrics) string {
	if e == nil {
		return "n/a: no engine metrics in this report (the target names no engine_metrics, or the report predates them)"
	}
	if e.Error != "" {
		return "n/a: " + e.Error
	}
	return fmt.Sprintf("%s from %s (%s)", e.Family, e.URL, e.FamilySource)
}

// writeEngine writes the engine section of the text report.
func writeEngine(out io.Writer, r *report.Report) {
	e := r.EngineMetrics
	fmt.Fprintf(out, "\nengine metrics (%s): %s\n", enginemetrics.Scope[:strings.Index(enginemetrics.Scope, ":")], EngineSummary(e))
	if e == nil {
		return
	}
	for _, p := range []struct {
		name string
		page *enginemetrics.Page
	}{{"before", e.Before}, {"after", e.After}} {
		if p.page == nil {
			continue
		}
		state := "ok"
		if p.page.Error != "" {
			state = "FAILED: " + p.page.Error
		}
		fmt.Fprintf(out, "  scrape %s at %s in %s: %s\n", p.name, p.page.Time.Format("15:04:05.000"), figure.Ms(p.page.Duration), state)
	}
	if e.Error != "" {
		return
	}
	writeEngineFigures(out, e)
	fmt.Fprintf(out, "  %s\n", EngineResolution(&e.Window))
	fmt.Fprintln(out, "  client − server (the network's and the client's share; the server's figures include warmup and other clients):")
	for _, c := range e.ClientVsServer {
		d := c.Diff()
		if c.Quantile != "mean" && c.Server == nil {
			continue // a percentile the engine does not give
		}
		if c.Server == nil || c.Client == nil {
			fmt.Fprintf(out, "    %s %s: %s\n", c.Metric, c.Quantile, d.Text())
			continue
		}
		fmt.Fprintf(out, "    %s %s: client %s, server %s, difference %s\n", c.Metric, c.Quantile, msNA(c.Client), ServerFigure(c), d.Text())
	}
	if gs := GaugesText(&e.Window); gs != "" {
		fmt.Fprintf(out, "  engine gauges before → after: %s\n", gs)
	}
	if sd := SpecDecodeText(&e.Window); sd != "" {
		fmt.Fprintf(out, "  %s\n", sd)
	}
	if l := LoRAText(&e.Window); l != "" {
		fmt.Fprintf(out, "  %s\n", l)
	}
	if e.Queued != "" {
		fmt.Fprintf(out, "  %s\n", e.Queued)
	}
	if e.Note != "" {
		fmt.Fprintf(out, "  note: %s\n", e.Note)
	}
}

// writeEngineFigures is the table of the engine's figures, each count
// with its unit, each percentile as its bucket; percentile columns only
// where the engine has buckets.
func writeEngineFigures(out io.Writer, e *report.EngineMetrics) {
	buckets := e.HasBuckets()
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	if buckets {
		fmt.Fprintln(tw, "  server\tcount\tp50\tp90\tp99\tmean\tsource")
	} else {
		fmt.Fprintln(tw, "  server\tcount\tmean\tsource")
	}
	for _, f := range e.Figures {
		cells := []string{f.Metric, CountText(f)}
		if buckets {
			for _, name := range []string{"p50", "p90", "p99"} {
				cell := "n/a"
				if q, ok := f.Quantile(name); ok {
					cell = q.Bucket()
				}
				cells = append(cells, cell)
			}
		}
		source := f.Source
		if f.NA != "" {
			source = "n/a: " + f.NA // last: a long reason widens no column
		}
		mean := "n/a"
		if f.Mean != nil {
			mean = figure.Ms(*f.Mean) // exact: sums and counts
		}
		cells = append(cells, mean, source)
		fmt.Fprintln(tw, "  "+strings.Join(cells, "\t"))
	}
	_ = tw.Flush()
}

// markdownEngine writes the engine section as a table of client, server
// and difference per quantile.
func markdownEngine(b *strings.Builder, r *report.Report) {
	e := r.EngineMetrics
	fmt.Fprintf(b, "\nEngine metrics (server-wide, all clients): %s.\n", md(EngineSummary(e)))
	if e == nil || e.Error != "" {
		return
	}
	b.WriteString("\n| metric | quantile | client | server | client − server |\n|---|---|--:|--:|--:|\n")
	for _, c := range e.ClientVsServer {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", c.Metric, c.Quantile, msNA(c.Client), md(ServerFigure(c)), md(c.Diff().Text()))
	}
	var parts []string
	for _, f := range e.Figures {
		if q, ok := f.Quantile("p99"); ok && f.NA == "" {
			parts = append(parts, fmt.Sprintf("%s p99 in %s", f.Metric, q.Bucket()))
		} else if f.NA == "" && f.Mean != nil && len(f.Quantiles) == 0 {
			parts = append(parts, fmt.Sprintf("%s mean %s over %s", f.Metric, figure.Ms(*f.Mean), CountText(f)))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(b, "\nServer figures (%s): %s.\n", md(EngineResolution(&e.Window)), strings.Join(parts, ", "))
	}
	if gs := GaugesText(&e.Window); gs != "" {
		fmt.Fprintf(b, "\nEngine gauges before → after: %s.\n", md(gs))
	}
	if sd := SpecDecodeText(&e.Window); sd != "" {
		fmt.Fprintf(b, "\n%s.\n", md(strings.ToUpper(sd[:1])+sd[1:]))
	}
	if l := LoRAText(&e.Window); l != "" {
		fmt.Fprintf(b, "\n%s.\n", md(l))
	}
	if e.Queued != "" {
		fmt.Fprintf(b, "\n**%s**.\n", md(e.Queued))
	}
	if e.Note != "" {
		fmt.Fprintf(b, "%s.\n", md(e.Note))
	}
}

// EngineResolution is the sentence under an engine window's figures: what they rest on.
func EngineResolution(w *enginemetrics.Window) string {
	if w.HasBuckets() {
		return "server percentiles are estimates from the engine's buckets, shown as the bucket each falls in; means are exact (sums and counts)"
	}
	return "the engine exports counters, no histograms: its figures are means (exact: sums and counts), no percentiles"
}

// CountText is an engine figure's count with what it counts: "92 requests", "6528 tokens".
func CountText(f enginemetrics.Figure) string {
	if f.Count == nil {
		return "n/a"
	}
	return strings.TrimSpace(fmt.Sprintf("%.0f %s", *f.Count, f.Unit))
}

// SpecDecodeText says how the engine's draft model fared over a window:
// "speculative decoding: acceptance rate 70.0%, mean acceptance length
// 3.10 tokens a step (100 drafts, 300 draft tokens, 210 accepted)", n/a
// with its reason where the engine drafted nothing; "" for a family that
// exports no such figure.
func SpecDecodeText(w *enginemetrics.Window) string {
	sd := w.SpecDecode
	switch {
	case sd == nil:
		return ""
	case sd.NA != "":
		return "speculative decoding: n/a (" + sd.NA + ")"
	}
	text := fmt.Sprintf("speculative decoding: acceptance rate %s, mean acceptance length %.2f tokens a step", figure.Percent(*sd.AcceptanceRate), *sd.MeanAcceptanceLength)
	if sd.Drafts != nil {
		return text + fmt.Sprintf(" (%.0f drafts, %.0f draft tokens, %.0f accepted: %s)", *sd.Drafts, *sd.DraftTokens, *sd.AcceptedTokens, sd.Source)
	}
	return text + " (" + sd.Source + ")"
}

// KVTransferText is disaggregated prefill's KV-cache transfer over the
// run, beside the TTFT split it is a part of: "kv transfer (the engine's
// aggregate over its 60 transfers, no request's own): mean 30.0 ms, p50
// in 25–50ms"; n/a with its reason; "" for a report without engine
// metrics or a family that exports none.
func KVTransferText(e *report.EngineMetrics) string {
	if e == nil || e.KVTransfer == nil {
		return ""
	}
	f := *e.KVTransfer
	if f.NA != "" || f.Mean == nil || f.Count == nil {
		return "kv transfer: n/a (" + cmp.Or(f.NA, "no figure") + ")"
	}
	text := fmt.Sprintf("kv transfer (the engine's aggregate over its %.0f transfers in the run, no request's own; from %s): mean %s", *f.Count, f.Source, figure.Ms(*f.Mean))
	for _, name := range []string{"p50", "p99"} {
		if q, ok := f.Quantile(name); ok {
			text += ", " + name + " in " + q.Bucket()
		}
	}
	return text
}

// LoRAText says which LoRA adapters the engine ran and queued at the
// window's end: "LoRA adapters at the end: running sql-lora; waiting none;
// at most 4 at once (vllm:lora_requests_info)"; "" where it said nothing.
func LoRAText(w *enginemetrics.Window) string {
	l := w.LoRA
	if l == nil {
		return ""
	}
	names := func(xs []string) string {
		if len(xs) == 0 {
			return "none"
		}
		return strings.Join(xs, ", ")
	}
	return fmt.Sprintf("LoRA adapters at the end: running %s; waiting %s; at most %s at once (vllm:lora_requests_info)", names(l.Running), names(l.Waiting), cmp.Or(l.MaxLoRA, "n/a"))
}

// GaugesText says each engine gauge before → after and, where it was read during
// the run, its range there.
func GaugesText(w *enginemetrics.Window) string {
	var gs []string
	for _, g := range w.Gauges {
		if g.NA != "" {
			continue
		}
		s := fmt.Sprintf("%s %s → %s", g.Metric, gaugeText(g.Before), gaugeText(g.After))
		if g.Samples > 0 {
			s += fmt.Sprintf(" (during the run: min %.3g, mean %.3g, max %.3g over %d reads)", *g.Min, *g.Mean, *g.Max, g.Samples)
		}
		gs = append(gs, s)
	}
	return strings.Join(gs, ", ")
}

func gaugeText(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.3g", *v)
}
