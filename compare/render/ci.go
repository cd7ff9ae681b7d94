package render

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/llmprobe/llmprobe/compare"
	"github.com/llmprobe/llmprobe/decide"
)

// Markdown writes the comparison for a CI step summary: the verdict, the
// sides, and the table of metrics.
func Markdown(w io.Writer, c *compare.Comparison) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", mdEscape(Headline(c)))
	for _, r := range c.Reasons {
		fmt.Fprintf(&b, "- because %s\n", mdEscape(r))
	}
	if len(c.Reasons) > 0 {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "- baseline: %s\n- candidate: %s\n- burst `%s`, seed %d: %s; %d pairs\n\n",
		mdEscape(sideLine(c.Baseline)), mdEscape(sideLine(c.Candidate)), c.Burst, c.Seed, roundsLine(c), c.Pairs)
	b.WriteString("| metric | pairs | candidate/baseline | 95 % interval | p | per round | verdict |\n")
	b.WriteString("|---|---:|---:|---|---:|---|---|\n")
	for _, m := range c.Metrics {
		v := verdictCell(m)
		if m.Verdict == decide.Worse {
			v = "**" + v + "**"
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s |\n", m.Name(), m.Pairs, estimate(m), interval(m), pValue(m), perRound(m), v)
	}
	fmt.Fprintf(&b, "\nThroughput (reported, not judged): %s. Client: %s.\n", throughputLine(c), clientLine(c))
	_, err := io.WriteString(w, b.String())
	return err
}

// mdEscape keeps a line from breaking a Markdown table or list.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// JUnit XML: one suite for the comparison, one test case per metric.
type (
	junitDoc struct {
		XMLName xml.Name   `xml:"testsuites"`
		Suite   junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name     string      `xml:"name,attr"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Errors   int         `xml:"errors,attr"`
		Skipped  int         `xml:"skipped,attr"`
		Cases    []junitCase `xml:"testcase"`
		Out      string      `xml:"system-out"`
	}
	junitCase struct {
		Name      string     `xml:"name,attr"`
		Classname string     `xml:"classname,attr"`
		Failure   *junitNote `xml:"failure"`
		Error     *junitNote `xml:"error"`
		Skip      *junitNote `xml:"skipped"`
		Out       string     `xml:"system-out,omitempty"`
	}
	junitNote struct {
		Message string `xml:"message,attr"`
	}
)

// JUnit writes the comparison as JUnit XML: a case per metric, failed
// where a judged metric is worse, an error where a judged one has not
// enough evidence, skipped where the pairs are too few or the metric is
// printed and not judged; and a case for the whole comparison, an error
// when it has not enough evidence or was not measured, with why.
func JUnit(w io.Writer, c *compare.Comparison) error {
	s := junitSuite{Name: "compare " + c.Burst}
	class := "llmprobe.compare." + c.Burst
	for _, m := range c.Metrics {
		jc := junitCase{Name: m.Name(), Classname: class, Out: fmt.Sprintf("%s %s, 95 %% interval %s, per round %s: %s", label(m), estimate(m), interval(m), perRound(m), m.Verdict)}
		switch {
		case m.Verdict == decide.NotApplicable:
			jc.Skip = &junitNote{"n/a: no answer of this burst has " + m.Metric}
		case !m.Judged:
			jc.Skip = &junitNote{"printed, not judged: max_regression names no tolerance for it"}
		case m.Verdict == decide.Worse:
			jc.Failure = &junitNote{fmt.Sprintf("%s worse: %s (95 %% CI %s) beyond the %s tolerance", label(m), change(m), changeInterval(m), tolerance(m))}
		case m.Verdict == decide.TooFew, m.Verdict == decide.NotEnough:
			jc.Error = &junitNote{m.Unsettled()}
		}
		s.Cases = append(s.Cases, jc)
	}
	whole := junitCase{Name: "comparison", Classname: class, Out: Headline(c)}
	if c.Verdict == decide.NotEnough || c.Verdict == decide.NotMeasured {
		whole.Error = &junitNote{fmt.Sprintf("%s: %s", c.Verdict, strings.Join(c.Reasons, "; "))}
	}
	s.Cases = append(s.Cases, whole)
	for _, jc := range s.Cases {
		s.Tests++
		switch {
		case jc.Failure != nil:
			s.Failures++
		case jc.Error != nil:
			s.Errors++
		case jc.Skip != nil:
			s.Skipped++
		}
	}
	var text bytes.Buffer
	Text(&text, c)
	s.Out = text.String()
	out, err := xml.MarshalIndent(junitDoc{Suite: s}, "", "  ")
	if err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s%s\n", xml.Header, out)
	return err
}
