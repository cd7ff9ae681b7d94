package render

import (
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
	return fmt.Sprintf("%.1fms (exact)", 1000**c.Server)
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
	fmt.Fprintf(out, "  %s\n", e.Resolution())
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
		fmt.Fprintf(out, "    %s %s: client %s, server %s, difference %s\n", c.Metric, c.Quantile, na(c.Client, "%.1fms", 1000), ServerFigure(c), d.Text())
	}
	if gs := e.GaugesText(); gs != "" {
		fmt.Fprintf(out, "  engine gauges before → after: %s\n", gs)
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
		cells := []string{f.Metric, f.CountText()}
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
			mean = enginemetrics.Ms(*f.Mean) // exact: as many digits as it needs
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
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", c.Metric, c.Quantile, na(c.Client, "%.1fms", 1000), md(ServerFigure(c)), md(c.Diff().Text()))
	}
	var parts []string
	for _, f := range e.Figures {
		if q, ok := f.Quantile("p99"); ok && f.NA == "" {
			parts = append(parts, fmt.Sprintf("%s p99 in %s", f.Metric, q.Bucket()))
		} else if f.NA == "" && f.Mean != nil && len(f.Quantiles) == 0 {
			parts = append(parts, fmt.Sprintf("%s mean %s over %s", f.Metric, enginemetrics.Ms(*f.Mean), f.CountText()))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(b, "\nServer figures (%s): %s.\n", md(e.Resolution()), strings.Join(parts, ", "))
	}
	if gs := e.GaugesText(); gs != "" {
		fmt.Fprintf(b, "\nEngine gauges before → after: %s.\n", md(gs))
	}
	if e.Queued != "" {
		fmt.Fprintf(b, "\n**%s**.\n", md(e.Queued))
	}
	if e.Note != "" {
		fmt.Fprintf(b, "%s.\n", md(e.Note))
	}
}
