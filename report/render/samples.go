package render

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/stats"
)

// pct formats s's named percentile in milliseconds, marked when it rests
// on too few samples.
func pct(s report.Summary, name string) string {
	v := ms(s, s.Quantile(name))
	if s.IsTooFew(name) {
		v += " (too few)"
	}
	return v
}

// interval formats s's named percentile's 95 % interval in milliseconds,
// or "n/a" where the report has none.
func interval(s report.Summary, name string) string {
	i, ok := s.Intervals[name]
	if s.Count == 0 || !ok {
		return "n/a"
	}
	return i.Text("%.1fms", 1000)
}

// TooFewText says which latencies' percentiles rest on fewer samples than
// they need, grouped by count ("ttft, e2e: 20 samples, too few for p90,
// p95, p99, p99.9 (needs 36, 72, 368, 3,688)"), or "" when none does.
func TooFewText(r *report.Report) string {
	var groups []string
	byKey := map[string][]string{}
	for _, m := range config.BurstMetrics {
		s := r.Latency[m]
		var names, needs []string
		for _, p := range stats.Percentiles {
			if s.IsTooFew(p.Name) {
				names, needs = append(names, p.Name), append(needs, thousands(stats.Needs(p.Name)))
			}
		}
		if len(names) == 0 {
			continue
		}
		key := fmt.Sprintf("%d samples, too few for %s (needs %s)", s.Count, strings.Join(names, ", "), strings.Join(needs, ", "))
		if byKey[key] == nil {
			groups = append(groups, key)
		}
		byKey[key] = append(byKey[key], m)
	}
	out := make([]string, len(groups))
	for i, k := range groups {
		out[i] = strings.Join(byKey[k], ", ") + ": " + k
	}
	return strings.Join(out, "; ")
}

// thousands writes n with thousands separated by commas.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// writeIntervals writes the latencies' 95 % intervals and what rests on
// too few samples.
func writeIntervals(out io.Writer, r *report.Report) {
	fmt.Fprintln(out, "\n95% intervals of the percentiles, from order statistics (∞: no sample bounds it):")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "metric\tp50\tp90\tp95\tp99\tp99.9\t")
	for _, m := range config.BurstMetrics {
		s := r.Latency[m]
		if s.Count == 0 {
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", m, interval(s, "p50"), interval(s, "p90"), interval(s, "p95"), interval(s, "p99"), interval(s, "p99.9"))
	}
	_ = tw.Flush()
	if t := TooFewText(r); t != "" {
		fmt.Fprintf(out, "too few: %s; such a percentile is close to the sample's maximum, not the percentile\n", t)
	}
}

// goodputInterval is ", 95 % Wilson interval lo–hi% of n" for the goodput
// ratio, or "" where the report has none.
func goodputInterval(r *report.Report) string {
	i := r.Goodput.RatioInterval
	if i == nil {
		return ""
	}
	return fmt.Sprintf(", 95%% Wilson interval %s of %d", i.Text("%.1f%%", 100), r.Goodput.Judged)
}
