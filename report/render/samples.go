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
func pct(s stats.Summary, name string) string {
	v := ms(s, s.Quantile(name))
	if s.IsTooFew(name) {
		v += " (too few)"
	}
	return v
}

// interval formats s's named percentile's 95 % interval in milliseconds,
// or "n/a" where the report has none.
func interval(s stats.Summary, name string) string {
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
				name := p.Name
				if w := s.Worth(p.Name); w < s.Count {
					name += " (worth " + thousands(w) + ")" // queued together: fewer than counted
				}
				names, needs = append(names, name), append(needs, thousands(stats.Needs(p.Name)))
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

// WorthText says which percentiles' samples are worth fewer independent
// ones than counted, and what ("ttft: p50 worth 29, p90 worth 364 of 600
// samples"), or "".
func WorthText(r *report.Report) string {
	var out []string
	for _, m := range config.BurstMetrics {
		s := r.Latency[m]
		var worth []string
		for _, p := range stats.Percentiles {
			if w := s.Worth(p.Name); w < s.Count {
				worth = append(worth, fmt.Sprintf("%s worth %s", p.Name, thousands(w)))
			}
		}
		if len(worth) > 0 {
			out = append(out, fmt.Sprintf("%s: %s of %s samples", m, strings.Join(worth, ", "), thousands(s.Count)))
		}
	}
	return strings.Join(out, "; ")
}

// worthNote is the sentence that says WorthText, or "".
func worthNote(r *report.Report) string {
	t := WorthText(r)
	if t == "" {
		return ""
	}
	return "requests of one run queue together, so by batch means these are worth fewer independent samples, and their intervals are over that: " + t
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
	if t := worthNote(r); t != "" {
		fmt.Fprintln(out, t)
	}
}

// goodputInterval is ", 95 % Wilson interval lo–hi% of n" for the goodput
// ratio, or "" where the report has none.
func goodputInterval(r *report.Report) string {
	i := r.Goodput.RatioInterval
	if i == nil {
		return ""
	}
	return fmt.Sprintf(", 95%% Wilson interval %s of %d%s", i.Text("%.1f%%", 100), r.Goodput.Judged, worth(r.Goodput.Effective))
}

// worth is " (worth n independent by batch means)" where a run's requests
// are worth fewer than counted (eff above 0), else "".
func worth(eff int) string {
	if eff <= 0 {
		return ""
	}
	return fmt.Sprintf(" (worth %d independent by batch means)", eff)
}

// repeatRows are a repeated burst's run-level figures as text: figure,
// mean, its interval and the runs' values; p95 and p99.9 are left to the
// JSON.
func repeatRows(r *report.Report) [][4]string {
	var rows [][4]string
	for _, f := range r.Repeat.Figures {
		if f.Quantile == "p95" || f.Quantile == "p99.9" || f.Mean == nil {
			continue
		}
		format, scale := "%.1fms", 1000.0
		switch f.Metric {
		case "goodput_ratio":
			format, scale = "%.1f%%", 100
		case "output_tokens_per_second":
			format, scale = "%.1f/s", 1
		}
		ci := "n/a (fewer than 3 runs)"
		if f.Interval != nil {
			ci = f.Interval.Text(format, scale)
		}
		values := make([]string, len(f.Values))
		for i, v := range f.Values {
			values[i] = fmt.Sprintf(format, scale*v)
		}
		mean := fmt.Sprintf(format, scale**f.Mean)
		if r.Latency[f.Metric].IsTooFew(f.Quantile) {
			mean += " (too few)" // each run's figure is
		}
		rows = append(rows, [4]string{strings.TrimSpace(f.Metric + " " + f.Quantile), mean, ci, strings.Join(values, " ")})
	}
	return rows
}

// repeatHead says what the run-level figures are.
func repeatHead(r *report.Report) string {
	return fmt.Sprintf("repeated %d times (%s): each figure's mean over the runs with its 95%% Student-t interval; the figures above are the last run's", r.Repeat.Runs, strings.Join(r.Repeat.RunIDs, ", "))
}

// writeRepeat writes a repeated burst's run-level figures.
func writeRepeat(out io.Writer, r *report.Report) {
	if r.Repeat == nil {
		return
	}
	fmt.Fprintf(out, "\n%s\n", repeatHead(r))
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "figure\tmean\t95% interval\truns\t")
	for _, row := range repeatRows(r) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", row[0], row[1], row[2], row[3])
	}
	_ = tw.Flush()
}

// markdownRepeat writes a repeated burst's run-level figures as a table.
func markdownRepeat(b *strings.Builder, r *report.Report) {
	if r.Repeat == nil {
		return
	}
	fmt.Fprintf(b, "\n%s.\n\n| figure | mean | 95 %% interval | runs |\n|---|--:|--:|--:|\n", md(repeatHead(r)))
	for _, row := range repeatRows(r) {
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", row[0], row[1], row[2], row[3])
	}
}
