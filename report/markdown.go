package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/llmprobe/llmprobe/config"
)

var statusMark = map[Status]string{
	StatusPassed: "✅", StatusFailed: "❌", StatusSkipped: "⏭️", StatusWarning: "⚠️", StatusError: "💥",
}

// WriteMarkdown writes the report as a CI step summary (GitHub's
// $GITHUB_STEP_SUMMARY): a heading with the verdict, a table of checks,
// the latency percentiles and the goodput; no links, so it reads the same
// anywhere. extra are the caller's checks, as for WriteJUnit.
func (r *Report) WriteMarkdown(w io.Writer, extra ...Check) error {
	var b strings.Builder
	checks := extra
	if r.ID != "" {
		checks = append(checks, r.Checks()...)
	}
	verdict, mark := "passed", "✅"
	for _, c := range checks {
		switch {
		case c.Status == StatusError:
			verdict, mark = "not measured", "💥"
		case c.Status == StatusFailed && verdict == "passed":
			verdict, mark = "failed", "❌"
		}
	}
	if r.ID != "" && !r.Passed && verdict == "passed" {
		verdict, mark = "failed", "❌" // Judge is the one verdict
	}
	fmt.Fprintf(&b, "## %s llmprobe gate: burst `%s` %s\n\n", mark, md(r.Burst), verdict)
	fmt.Fprintf(&b, "Target `%s`", md(r.Target))
	if r.Model != "" {
		fmt.Fprintf(&b, ", model `%s`", md(r.Model))
	}
	if r.Engine != "" {
		fmt.Fprintf(&b, ", engine %s %s", md(r.Engine), md(r.EngineVersion))
	}
	if r.ID != "" {
		fmt.Fprintf(&b, "; report `%s`: %d of %d planned requests at %.2f/s planned, %s/s achieved, in %.1f s",
			r.ID, r.Requests, r.PlannedRequests, r.Rate, na(r.AchievedRate, "%.2f", 1), r.DurationSeconds)
	}
	b.WriteString(".\n")
	if u := r.Upgrade; u != nil {
		mark := "✅"
		switch {
		case u.Regressed:
			mark = "❌"
		case u.BaselineID == "":
			mark = "⏭️"
		}
		fmt.Fprintf(&b, "\n%s **Upgrade**: %s", mark, md(u.Summary))
		if u.BaselineID != "" {
			fmt.Fprintf(&b, " (baseline `%s`)", md(u.BaselineID))
		}
		b.WriteString(".\n")
	}
	if len(r.Overrides) > 0 {
		fmt.Fprintf(&b, "\nOverridden for this run: `%s`\n", md(strings.Join(r.Overrides, " ")))
	}

	b.WriteString("\n| | check | detail |\n|---|---|---|\n")
	for _, c := range checks {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", statusMark[c.Status], md(c.Name), md(c.Detail))
	}
	if r.ID == "" {
		_, err := io.WriteString(w, b.String())
		return err
	}

	b.WriteString("\n| metric | samples | p50 | p90 | p99 | p99.9 | max |\n|---|--:|--:|--:|--:|--:|--:|\n")
	for _, m := range config.BurstMetrics {
		s := r.Latency[m]
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s |\n", m, s.Count, ms(s, s.P50), ms(s, s.P90), ms(s, s.P99), ms(s, s.P999), ms(s, s.Max))
	}
	fmt.Fprintf(&b, "\n%s.\n", md(r.BoundText()))
	if bd := r.TTFTBreakdown; bd != nil {
		fmt.Fprintf(&b, "\nWhere TTFT went (%d requests; engine timings from %s):\n\n| component | p50 | p90 | p99 | share |\n|---|--:|--:|--:|--:|\n", bd.Requests, md(bd.EngineTimingsText()))
		for _, c := range bd.Components {
			s := c.Summary
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %.1f%% |\n", c.Component, ms(s, s.P50), ms(s, s.P90), ms(s, s.P99), 100*c.Share)
		}
	}
	r.markdownTurns(&b)
	fmt.Fprintf(&b, "\nGoodput %s of requests (%s req/s, %s output tok/s); throughput %s req/s, %s output tok/s.",
		na(r.Goodput.Ratio, "%.1f%%", 100), na(r.Goodput.Requests, "%.2f", 1), na(r.Goodput.OutputTokens, "%.1f", 1),
		na(r.Throughput.Requests, "%.2f", 1), na(r.Throughput.OutputTokens, "%.1f", 1))
	if r.MaxRateUnderSLO != nil {
		fmt.Fprintf(&b, " Max rate under SLO: %.2f/s.", *r.MaxRateUnderSLO)
	}
	fmt.Fprintf(&b, "\nOutcomes: %s.\n", md(strings.Join(r.outcomeCounts(), ", ")))
	r.markdownEngine(&b)
	if len(r.Failures) > 0 {
		f := r.Failures[0]
		fmt.Fprintf(&b, "Most frequent failure: %d × %s in %s (%s): %s\n", f.Count, md(string(f.Outcome)), md(f.Phase), md(f.Reason), md(f.Example))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// md makes text from configurations and targets safe inside a table cell
// or code span: no line breaks, pipes, backticks or HTML.
var md = strings.NewReplacer("\r", " ", "\n", " ", "|", `\|`, "`", "'", "<", "&lt;", ">", "&gt;").Replace
