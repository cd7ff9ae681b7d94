package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/report"
)

var statusMark = map[Status]string{
	StatusPassed: "✅", StatusFailed: "❌", StatusSkipped: "⏭️", StatusWarning: "⚠️", StatusError: "💥",
}

var verdictMark = map[decide.Verdict]string{
	decide.Passed: "✅", decide.Failed: "❌", decide.Inconclusive: "💥", decide.NotMeasured: "💥",
	decide.NotEnough: "⚠️", decide.NothingJudged: "⚠️",
}

// hasError says one of checks is an error: the run was not measured, or
// its report not kept.
func hasError(checks []Check) bool {
	for _, c := range checks {
		if c.Status == StatusError {
			return true
		}
	}
	return false
}

// Markdown writes the report as a CI step summary (GitHub's
// $GITHUB_STEP_SUMMARY): a heading with the verdict, a table of checks,
// the latency percentiles and the goodput; no links, so it reads the same
// anywhere. extra are the caller's checks, as for JUnit.
func Markdown(w io.Writer, r *report.Report, extra ...Check) error {
	var b strings.Builder
	checks := extra
	if r.ID != "" {
		checks = append(checks, Checks(r)...)
	}
	word, mark := "passed", "✅"
	for _, c := range checks {
		switch {
		case c.Status == StatusError:
			word, mark = "not measured", "💥"
		case c.Status == StatusFailed && word == "passed":
			word, mark = "failed", "❌"
		}
	}
	if r.ID != "" && !r.Passed && word == "passed" {
		word, mark = "failed", "❌" // Judge is the one verdict
	}
	why := ""
	if r.ID != "" && r.Requests > 0 && !hasError(extra) {
		o := report.VerdictOf(r) // with its caveat, or why it failed
		word, why, mark = string(o.Word), o.Reason, verdictMark[o.Word]
		if o.Word == decide.Passed && r.ClientSaturated {
			mark = "⚠️"
		}
	}
	fmt.Fprintf(&b, "## %s llmprobe gate: burst `%s` %s\n\n", mark, md(r.Burst), word)
	if why != "" {
		fmt.Fprintf(&b, "**%s**\n\n", md(why))
	}
	if r.BaselineNote != "" {
		fmt.Fprintf(&b, "**%s**\n\n", md(r.BaselineNote))
	}
	markdownHead(&b, r)
	b.WriteString("\n| | check | detail |\n|---|---|---|\n")
	for _, c := range checks {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", statusMark[c.Status], md(c.Name), md(c.Detail))
	}
	if r.ID != "" {
		markdownFigures(&b, r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// markdownHead says what was measured, an upgrade run's verdict and the
// run's overrides.
func markdownHead(b *strings.Builder, r *report.Report) {
	fmt.Fprintf(b, "Target `%s`", md(r.Target))
	if r.Model != "" {
		fmt.Fprintf(b, ", model `%s`", md(r.Model))
	}
	if r.Engine != "" {
		fmt.Fprintf(b, ", engine %s %s", md(r.Engine), md(r.EngineVersion))
	}
	if r.ID != "" {
		fmt.Fprintf(b, "; report `%s`: %d of %d planned requests at %.2f/s planned, %s/s achieved, in %.1fs",
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
		fmt.Fprintf(b, "\n%s **Upgrade**: %s", mark, md(u.Summary))
		if u.BaselineID != "" {
			fmt.Fprintf(b, " (baseline `%s`)", md(u.BaselineID))
		}
		b.WriteString(".\n")
	}
	if len(r.Overrides) > 0 {
		fmt.Fprintf(b, "\nOverridden for this run: `%s`\n", md(strings.Join(r.Overrides, " ")))
	}
}

// markdownFigures writes what a measured run measured: the latencies,
// goodput, outcomes and the most frequent failure, then folded away the
// client's error bound, the TTFT split, the turns and the engine's view.
func markdownFigures(b *strings.Builder, r *report.Report) {
	b.WriteString("\n| metric | samples | p50 | p90 | p99 | p99.9 | max |\n|---|--:|--:|--:|--:|--:|--:|\n")
	for _, m := range config.BurstMetrics {
		s := r.Latency[m]
		cell := func(name string) string { return pct(s, name) + " <sub>" + md(interval(s, name)) + "</sub>" }
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %s |\n", m, s.Count, cell("p50"), cell("p90"), cell("p99"), cell("p99.9"), ms(s, s.Max))
	}
	b.WriteString("\nUnder each percentile its 95% interval from order statistics (∞: no sample bounds it).")
	if t := TooFewText(r); t != "" {
		fmt.Fprintf(b, " **Too few** samples: %s.", md(t))
	}
	if t := worthNote(r); t != "" {
		fmt.Fprintf(b, " Worth fewer: %s.", md(t))
	}
	b.WriteString("\n")
	fmt.Fprintf(b, "\nGoodput %s of requests%s (%s req/s, %s output tok/s); throughput %s.",
		na(r.Goodput.Ratio, "%.1f%%", 100), goodputInterval(r), na(r.Goodput.Requests, "%.2f", 1), na(r.Goodput.OutputTokens, "%.1f", 1),
		throughputText(r))
	if r.MaxRateUnderSLO != nil {
		fmt.Fprintf(b, " Max rate under SLO: %.2f/s.", *r.MaxRateUnderSLO)
	}
	fmt.Fprintf(b, "\nOutcomes: %s%s.\n", md(strings.Join(outcomeCounts(r), ", ")), md(retriesText(r)))
	if line := TranscriptionText(r); line != "" {
		fmt.Fprintf(b, "\n%s.\n", md(line))
	}
	if line := QualityFailedText(r); line != "" {
		fmt.Fprintf(b, "\n%s.\n", md(line))
	}
	if line := TokensText(r); line != "" {
		fmt.Fprintf(b, "\n%s.\n", md(line))
	}
	if len(r.Failures) > 0 {
		f := r.Failures[0]
		fmt.Fprintf(b, "\nMost frequent failure: %d × %s: %s\n", f.Count, md(string(f.Outcome)), md(f.Text()))
	}
	markdownSweep(b, r)
	markdownReplicas(b, r)
	// The details fold away: a step summary is read in every CI run.
	b.WriteString("\n<details><summary>Details: the client's error bound, where TTFT went, turns, the engine's view</summary>\n")
	fmt.Fprintf(b, "\n%s.\n", md(boundText(r)))
	if bd := r.TTFTBreakdown; bd != nil {
		fmt.Fprintf(b, "\nWhere TTFT went (%d requests; engine timings from %s):\n\n| component | p50 | p90 | p99 | share |\n|---|--:|--:|--:|--:|\n", bd.Requests, md(engineTimingsText(bd, r.Engine)))
		for _, c := range bd.Components {
			s := c.Summary
			fmt.Fprintf(b, "| %s | %s | %s | %s | %.1f%% |\n", c.Component, ms(s, s.P50), pct(s, "p90"), pct(s, "p99"), 100*c.Share)
		}
		if kv := KVTransferText(r.EngineMetrics); kv != "" {
			fmt.Fprintf(b, "\n%s.\n", md(kv))
		}
	}
	markdownRepeat(b, r)
	markdownTurns(b, r)
	markdownEngine(b, r)
	b.WriteString("\n</details>\n")
}

// markdownTurns writes the prefix cache line and the by-turn table, when
// there is one.
func markdownTurns(b *strings.Builder, r *report.Report) {
	if r.PromptCache != nil {
		b.WriteString("\n" + md(PrefixCacheLine(r)) + ".\n")
	}
	if len(r.Turns) == 0 {
		return
	}
	b.WriteString("\n" + md(TurnsHeading(r.Turns)) + ":\n\n| " + strings.Join(turnHeader(), " | ") + " |\n|---|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, row := range turnRows(r) {
		for i := range row {
			row[i] = md(row[i])
		}
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
}

// md makes text from configurations and targets safe inside a table cell
// or code span: no line breaks, pipes, backticks or HTML.
var md = strings.NewReplacer("\r", " ", "\n", " ", "|", `\|`, "*", `\*`, "`", "'", "<", "&lt;", ">", "&gt;").Replace
