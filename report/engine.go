package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/llmprobe/llmprobe/enginemetrics"
)

// EngineMetrics is what the engine's own /metrics said about the burst,
// server-wide, next to what llmprobe measured: the difference of the two
// is the network's and the client's share.
type EngineMetrics struct {
	enginemetrics.Window
	// ClientRequests is what the run sent, warmup included: the engine's
	// counts above it are other clients' traffic.
	ClientRequests int                `json:"client_requests"`
	ClientVsServer []EngineComparison `json:"client_vs_server"`
	Note           string             `json:"note,omitempty"`
}

// EngineComparison is one quantile (or the mean) of a latency seen from
// both sides, in seconds. Difference is client − server; null with NA's
// reason when a side has no figure. A server quantile is an estimate within
// its bucket, ServerBucketLower to ServerBucketUpper (null: unbounded): a
// difference smaller than the bucket's width says little. Means are exact.
type EngineComparison struct {
	Metric            string   `json:"metric"`
	Quantile          string   `json:"quantile"`
	Client            *float64 `json:"client"`
	Server            *float64 `json:"server"`
	Difference        *float64 `json:"difference"`
	ServerBucketLower *float64 `json:"server_bucket_lower,omitempty"`
	ServerBucketUpper *float64 `json:"server_bucket_upper,omitempty"`
	NA                string   `json:"na,omitempty"`
}

// Bucket says where a server quantile lies, "" for a mean.
func (c EngineComparison) Bucket() string {
	if c.ServerBucketLower == nil {
		return ""
	}
	if c.ServerBucketUpper == nil {
		return fmt.Sprintf("in its bucket above %.1fms", 1000**c.ServerBucketLower)
	}
	return fmt.Sprintf("in its bucket %.1f–%.1fms", 1000**c.ServerBucketLower, 1000**c.ServerBucketUpper)
}

// EngineScrapes are the two reads of the engine's page around a run.
type EngineScrapes struct {
	URL           string
	Before, After *enginemetrics.Page
}

// compared are the latencies both sides measure.
var compared = []string{"ttft", "e2e", "tpot", "itl"}

// AttachEngineMetrics computes the engine section from the run's scrapes,
// once the engine family and model are known; without scrapes it does nothing.
func (r *Report) AttachEngineMetrics(o enginemetrics.Options) {
	s := r.engineScrapes
	if s == nil || s.Before == nil || s.After == nil {
		return
	}
	w := enginemetrics.Compare(s.Before, s.After, o)
	w.URL = s.URL
	e := &EngineMetrics{Window: *w, ClientRequests: r.Requests + r.WarmupRequests}
	for _, m := range compared {
		e.ClientVsServer = append(e.ClientVsServer, r.compare(w, m)...)
	}
	for _, m := range []string{enginemetrics.MetricE2E, enginemetrics.MetricTTFT} {
		if f, ok := w.Lookup(m); ok && f.Count != nil && int(*f.Count) > e.ClientRequests {
			e.Note = fmt.Sprintf("the engine finished %d requests between the scrapes, llmprobe sent %d (warmup included): other clients' traffic is in its figures", int(*f.Count), e.ClientRequests)
			break
		}
	}
	r.EngineMetrics = e
}

func (r *Report) compare(w *enginemetrics.Window, metric string) []EngineComparison {
	client := r.Latency[metric]
	f, _ := w.Lookup(metric)
	var out []EngineComparison
	add := func(q string, c float64, server *enginemetrics.Quantile) {
		row := EngineComparison{Metric: metric, Quantile: q}
		if client.Count > 0 {
			row.Client = &c
		}
		if server != nil {
			v := server.Value
			row.Server = &v
			if q != "mean" {
				lower := server.BucketLower
				row.ServerBucketLower, row.ServerBucketUpper = &lower, server.BucketUpper
			}
		}
		switch {
		case f.NA != "":
			row.NA = "server: " + f.NA
		case server == nil:
			row.NA = "server: no " + q
		case client.Count == 0:
			row.NA = "client: no sample"
		default:
			d := c - server.Value
			row.Difference = &d
		}
		out = append(out, row)
	}
	// The mean first: from the sums, it is exact on both sides.
	var mean *enginemetrics.Quantile
	if f.Mean != nil {
		mean = &enginemetrics.Quantile{Value: *f.Mean}
	}
	add("mean", client.Mean, mean)
	if f.Mean != nil && len(f.Quantiles) == 0 {
		return out // a counters-only engine has means alone
	}
	for _, q := range enginemetrics.Quantiles {
		var server *enginemetrics.Quantile
		if qq, ok := f.Quantile(q.Name); ok {
			server = &qq
		}
		add(q.Name, client.Quantile(q.Name), server)
	}
	return out
}

// EngineSummary is the section's one line for pages and logs.
func (e *EngineMetrics) EngineSummary() string {
	if e == nil {
		return "n/a: no engine metrics in this report (the target names no engine_metrics, or the report predates them)"
	}
	if e.Error != "" {
		return "n/a: " + e.Error
	}
	return fmt.Sprintf("%s from %s (%s)", e.Family, e.URL, e.FamilySource)
}

// writeEngine writes the engine section of the text report.
func (r *Report) writeEngine(out io.Writer) {
	e := r.EngineMetrics
	fmt.Fprintf(out, "\nengine metrics (%s): %s\n", enginemetrics.Scope[:strings.Index(enginemetrics.Scope, ":")], e.EngineSummary())
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
		if b := c.Bucket(); b != "" {
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
func (r *Report) markdownEngine(b *strings.Builder) {
	e := r.EngineMetrics
	fmt.Fprintf(b, "\nEngine metrics (server-wide, all clients): %s.\n", md(e.EngineSummary()))
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
		if bk := c.Bucket(); bk != "" {
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
