package render

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/llmprobe/llmprobe/enginemetrics"
	"github.com/llmprobe/llmprobe/report"
)

// Bucket says where a server quantile lies, "" for a mean.
func Bucket(c report.EngineComparison) string {
	if c.ServerBucketLower == nil {
		return ""
	}
	if c.ServerBucketUpper == nil {
		return fmt.Sprintf("in its bucket above %.1fms", 1000**c.ServerBucketLower)
	}
	return fmt.Sprintf("in its bucket %.1f–%.1fms", 1000**c.ServerBucketLower, 1000**c.ServerBucketUpper)
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
		fmt.Fprintf(out, "  scrape %s at %s in %.3fs: %s\n", p.name, p.page.Time.Format("15:04:05.000"), p.page.Duration, state)
	}
	if e.Error != "" {
		return
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  server\tcount\tp50\tp90\tp99\tmean\tsource")
	for _, f := range e.Figures {
		if f.NA != "" {
			fmt.Fprintf(tw, "  %s\tn/a: %s\t\t\t\t\t\n", f.Metric, f.NA)
			continue
		}
		q := func(name string) string {
			if qq, ok := f.Quantile(name); ok {
				return fmt.Sprintf("%.1fms", 1000*qq.Value)
			}
			return "n/a"
		}
		fmt.Fprintf(tw, "  %s\t%.0f\t%s\t%s\t%s\t%s\t%s\n", f.Metric, deref(f.Count), q("p50"), q("p90"), q("p99"), na(f.Mean, "%.1fms", 1000), f.Source)
	}
	_ = tw.Flush()
	fmt.Fprintln(out, "  server percentiles are estimates from the engine's buckets, each within its bucket's bounds; means are exact")
	fmt.Fprintln(out, "  client − server (the network's and the client's share; the server's figures include warmup and other clients):")
	for _, c := range e.ClientVsServer {
		if c.NA != "" {
			if c.Quantile == "mean" {
				fmt.Fprintf(out, "    %s: n/a: %s\n", c.Metric, c.NA)
			}
			continue
		}
		bucket := ""
		if b := Bucket(c); b != "" {
			bucket = " (" + b + ")"
		}
		fmt.Fprintf(out, "    %s %s: client %s, server %s%s, difference %s\n", c.Metric, c.Quantile, na(c.Client, "%.1fms", 1000), na(c.Server, "%.1fms", 1000), bucket, na(c.Difference, "%+.1fms", 1000))
	}
	var gs []string
	for _, g := range e.Gauges {
		if g.NA == "" {
			gs = append(gs, fmt.Sprintf("%s %s → %s", g.Metric, na(g.Before, "%g", 1), na(g.After, "%g", 1)))
		}
	}
	if len(gs) > 0 {
		fmt.Fprintf(out, "  engine gauges before → after: %s\n", strings.Join(gs, ", "))
	}
	if e.Note != "" {
		fmt.Fprintf(out, "  note: %s\n", e.Note)
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// markdownEngine writes the engine section as a table of client, server
// and difference per quantile.
func markdownEngine(b *strings.Builder, r *report.Report) {
	e := r.EngineMetrics
	fmt.Fprintf(b, "\nEngine metrics (server-wide, all clients): %s.\n", md(EngineSummary(e)))
	if e == nil || e.Error != "" {
		return
	}
	b.WriteString("\n| metric | quantile | client | server (estimate) | client − server |\n|---|---|--:|--:|--:|\n")
	for _, c := range e.ClientVsServer {
		diff := na(c.Difference, "%+.1fms", 1000)
		if c.NA != "" {
			diff = "n/a: " + md(c.NA)
		}
		server := na(c.Server, "%.1fms", 1000)
		if bk := Bucket(c); bk != "" {
			server += " (" + bk + ")"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", c.Metric, c.Quantile, na(c.Client, "%.1fms", 1000), server, diff)
	}
	var parts []string
	for _, f := range e.Figures {
		if q, ok := f.Quantile("p99"); ok && f.NA == "" {
			parts = append(parts, fmt.Sprintf("%s p99 %.1fms", f.Metric, 1000*q.Value))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(b, "\nServer p99 (bucket estimates): %s.\n", strings.Join(parts, ", "))
	}
	if e.Note != "" {
		fmt.Fprintf(b, "%s.\n", md(e.Note))
	}
}
