// Package render writes a comparison of two targets for people and CI
// systems: text, Markdown, JUnit XML and an HTML page with both sides'
// distributions.
package render

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/llmprobe/llmprobe/compare"
	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/lib/figure"
)

// Text writes the comparison top-down: the verdict, the two sides and how
// they ran, the table of metrics, then throughput and the client's bound.
func Text(w io.Writer, c *compare.Comparison) {
	fmt.Fprintf(w, "%s\n", Headline(c))
	for _, r := range c.Reasons {
		fmt.Fprintf(w, "  because %s\n", r)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "baseline   %s\ncandidate  %s\n", sideLine(c.Baseline), sideLine(c.Candidate))
	fmt.Fprintf(w, "burst %s, seed %d: %s; %d pairs succeeded on both sides\n\n", c.Burst, c.Seed, roundsLine(c), c.Pairs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "METRIC\tPAIRS\tCANDIDATE/BASELINE\t95 % INTERVAL\tP\tPER ROUND\tVERDICT")
	for _, m := range c.Metrics {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", m.Name(), m.Pairs, estimate(m), interval(m), pValue(m), perRound(m), verdictCell(m))
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "\n%s\n", JudgedLine(c))
	fmt.Fprintf(w, "throughput (reported, not judged): %s\n", throughputLine(c))
	fmt.Fprintf(w, "client: %s\n", clientLine(c))
}

// Headline is the comparison's verdict in one line, with the metrics that
// decided it.
func Headline(c *compare.Comparison) string {
	who := fmt.Sprintf("candidate %s vs baseline %s", c.Candidate.Target, c.Baseline.Target)
	// The medians first, then the tails; the table has the rest.
	var decided, tails []string
	for _, m := range c.Metrics {
		if m.Verdict == c.Verdict && (m.Verdict == decide.Worse || m.Verdict == decide.Better) {
			s := fmt.Sprintf("%s %s (95 %% CI %s)", label(m), change(m), changeInterval(m))
			if m.Quantile == "p50" {
				decided = append(decided, s)
			} else {
				tails = append(tails, s)
			}
		}
	}
	decided = append(decided, tails...)
	if len(decided) > maxHeadline {
		decided = append(decided[:maxHeadline], fmt.Sprintf("and %d more", len(decided)-maxHeadline))
	}
	switch c.Verdict {
	case decide.Worse, decide.Better:
		return fmt.Sprintf("compare: %s: %s: %s", who, c.Verdict, strings.Join(decided, ", "))
	case decide.Within:
		return fmt.Sprintf("compare: %s: within tolerance: every judged metric is shown within its tolerance", who)
	}
	return fmt.Sprintf("compare: %s: %s", who, c.Verdict)
}

// JudgedLine names the metrics that set the verdict and the rule.
func JudgedLine(c *compare.Comparison) string {
	var judged []string
	for _, m := range c.Metrics {
		if m.Judged {
			judged = append(judged, m.Name())
		}
	}
	return fmt.Sprintf("judged: %s (the others are printed, not judged); each by its 95 %% interval over the rounds against its tolerance: worse beyond it, within inside it, not enough evidence across it",
		strings.Join(judged, ", "))
}

// maxHeadline is how many metrics the headline names.
const maxHeadline = 3

// label is the metric's name as people write it: TPOT p50.
func label(m decide.Metric) string {
	if m.IsShare() {
		return m.Metric
	}
	return strings.ToUpper(m.Metric) + " " + m.Quantile
}

func sideLine(s compare.Side) string {
	out := fmt.Sprintf("%s (%s), model %s", s.Target, s.URL, s.Model)
	if s.Engine != "" {
		out += fmt.Sprintf(", %s %s", s.Engine, s.EngineVersion)
	}
	out += fmt.Sprintf(": %d requests, %d succeeded, %d good", s.Requests, s.Succeeded, s.Good)
	if q := s.QualityShare(); q != "" {
		out += ", answers passing their checks " + q
	}
	return out
}

func roundsLine(c *compare.Comparison) string {
	short := make([]string, len(c.Order))
	for i, o := range c.Order {
		short[i] = strings.ToUpper(o[:1])
	}
	return fmt.Sprintf("%d rounds per side in the order %s (B baseline, C candidate), each warmed up", c.Rounds, strings.Join(short, " "))
}

// estimate is the metric's point estimate: a ratio, or goodput's
// difference in percentage points.
func estimate(m decide.Metric) string {
	if m.Estimate == nil {
		return "n/a"
	}
	if m.IsShare() {
		return points(*m.Estimate)
	}
	return fmt.Sprintf("%.3f", *m.Estimate)
}

// change is the estimate as a change: +40 %, or goodput's points.
func change(m decide.Metric) string {
	if m.Estimate == nil {
		return "n/a"
	}
	if m.IsShare() {
		return points(*m.Estimate)
	}
	return fmt.Sprintf("%+.1f %%", 100*(*m.Estimate-1))
}

// changeInterval is the 95 % interval as changes: +17.9 … +21.4 %.
func changeInterval(m decide.Metric) string {
	switch {
	case m.Lower == nil || m.Upper == nil:
		return interval(m)
	case m.IsShare():
		return fmt.Sprintf("%s … %s", points(*m.Lower), points(*m.Upper))
	}
	return fmt.Sprintf("%+.1f … %+.1f %%", 100*(*m.Lower-1), 100*(*m.Upper-1))
}

// interval is the 95 % interval, or what stands in for it.
func interval(m decide.Metric) string {
	switch {
	case m.Verdict == decide.TooFew && m.PerRound():
		return fmt.Sprintf("too few, needs %d (%d a round)", m.Needs, m.Needs/len(m.Rounds))
	case m.Verdict == decide.TooFew:
		return fmt.Sprintf("too few, needs %d", m.Needs)
	case m.Verdict == decide.NotApplicable:
		return "n/a: no answer has one"
	case m.Lower == nil || m.Upper == nil:
		return "n/a"
	case m.IsShare():
		return fmt.Sprintf("[%s, %s]", points(*m.Lower), points(*m.Upper))
	}
	return fmt.Sprintf("[%.3f, %.3f]", *m.Lower, *m.Upper)
}

// points is a difference of shares in percentage points, signed; one
// that rounds to zero has no sign.
func points(d float64) string { return strings.TrimSuffix(figure.SignedPercent(d), "%") + " pp" }

func pValue(m decide.Metric) string {
	if m.P == nil {
		return "-"
	}
	if *m.P < 0.0001 {
		return "<0.0001"
	}
	return fmt.Sprintf("%.4f", *m.P)
}

func perRound(m decide.Metric) string {
	if len(m.Rounds) == 0 {
		return "n/a"
	}
	out := make([]string, len(m.Rounds))
	for i, r := range m.Rounds {
		switch {
		case r == nil:
			out[i] = "n/a"
		case m.IsShare():
			out[i] = points(*r)
		default:
			out[i] = fmt.Sprintf("%.3f", *r)
		}
	}
	return strings.Join(out, " ")
}

func verdictCell(m decide.Metric) string {
	var v string
	switch m.Verdict {
	case decide.Worse, decide.Better:
		v = fmt.Sprintf("%s (beyond %s)", m.Verdict, tolerance(m))
	case decide.Within:
		v = fmt.Sprintf("%s (%s)", m.Verdict, tolerance(m))
	case decide.NotEnough:
		v = fmt.Sprintf("%s (across %s)", m.Verdict, tolerance(m))
	default:
		v = string(m.Verdict)
	}
	if !m.Judged && m.Verdict != decide.NotApplicable {
		v += ", not judged"
	}
	return v
}

// tolerance is m's tolerance as its estimate reads: 10 %, or a share's
// 2.0 pp.
func tolerance(m decide.Metric) string {
	if m.IsShare() {
		return fmt.Sprintf("%.1f pp", 100*m.Tolerance)
	}
	return fmt.Sprintf("%.0f %%", 100*m.Tolerance)
}

func throughputLine(c *compare.Comparison) string {
	f := func(v *float64) string {
		if v == nil {
			return "n/a"
		}
		return fmt.Sprintf("%.1f", *v)
	}
	out := fmt.Sprintf("baseline %s req/s, %s output tok/s; candidate %s req/s, %s output tok/s",
		f(c.Baseline.RequestsPerSecond), f(c.Baseline.OutputTokensPerSecond), f(c.Candidate.RequestsPerSecond), f(c.Candidate.OutputTokensPerSecond))
	if b, k := c.Baseline.OutputTokensPerSecond, c.Candidate.OutputTokensPerSecond; b != nil && k != nil && *b > 0 {
		out += fmt.Sprintf(" (output tokens ×%.3f)", *k / *b)
	}
	return out
}

func clientLine(c *compare.Comparison) string {
	var parts []string
	for _, s := range []compare.Side{c.Baseline, c.Candidate} {
		e := s.ErrorBound
		switch {
		case s.ClientSaturated:
			parts = append(parts, fmt.Sprintf("saturated against %s", s.Target))
		case e != nil && e.P99 != nil:
			parts = append(parts, fmt.Sprintf("kept up against %s (error bound p99 %s)", s.Target, figure.Delay(*e.P99)))
		default:
			parts = append(parts, fmt.Sprintf("kept up against %s", s.Target))
		}
	}
	return strings.Join(parts, "; ")
}
