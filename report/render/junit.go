// A burst report as JUnit XML for CI systems: one test case per check, the
// report's facts as properties.

package render

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/llmprobe/llmprobe/report"
)

// JUnit XML, as CI systems read it: one suite for the burst, one test case
// per check.
type (
	junitSuites struct {
		XMLName xml.Name `xml:"testsuites"`
		junitCounts
		Suites []junitSuite `xml:"testsuite"`
	}
	// junitCounts are the attributes suites and their document share.
	junitCounts struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Skipped  int    `xml:"skipped,attr"`
		Time     string `xml:"time,attr"`
	}
	junitSuite struct {
		junitCounts
		Timestamp  string          `xml:"timestamp,attr,omitempty"`
		Hostname   string          `xml:"hostname,attr,omitempty"`
		Properties []junitProperty `xml:"properties>property"`
		Cases      []junitCase     `xml:"testcase"`
		SystemOut  *junitText      `xml:"system-out"`
	}
	junitProperty struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Time      string        `xml:"time,attr"`
		Failure   *junitProblem `xml:"failure"`
		Error     *junitProblem `xml:"error"`
		Skip      *junitProblem `xml:"skipped"`
		SystemOut *junitText    `xml:"system-out"`
	}
	// junitText keeps its lines readable in the file.
	junitText struct {
		Text string `xml:",cdata"`
	}
	junitProblem struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr,omitempty"`
		Text    string `xml:",chardata"`
	}
)

// JUnit writes the report as JUnit XML: a test suite for the burst
// with the report's facts as properties, a test case per check (Checks),
// and the text report as the suite's output. extra are checks the caller
// adds, such as the error that the target could not be measured; a report
// with no measurement at all may carry only its burst and target.
func JUnit(w io.Writer, r *report.Report, extra ...Check) error {
	seconds := fmt.Sprintf("%.3f", r.DurationSeconds)
	s := junitSuite{junitCounts: junitCounts{Name: r.Burst, Time: seconds}, Hostname: r.Host}
	if !r.Start.IsZero() {
		s.Timestamp = r.Start.UTC().Format("2006-01-02T15:04:05")
	}
	rate := "" // a run that never started has no rate: leave it out, not 0
	if r.Rate > 0 {
		rate = fmt.Sprintf("%g", r.Rate)
	}
	for _, p := range [][2]string{
		{"report_id", r.ID}, {"burst", r.Burst}, {"target", r.Target}, {"model", r.Model},
		{"engine", r.Engine}, {"engine_version", r.EngineVersion}, {"llmprobe_version", r.LLMProbeVersion},
		{"rate", rate}, {"overrides", strings.Join(r.Overrides, " ")},
		{"baseline", r.BaselineNote}, {"too_few", TooFewText(r)}, {"error_bound", errorBound(r)},
	} {
		if p[1] != "" {
			s.Properties = append(s.Properties, junitProperty{p[0], p[1]})
		}
	}
	if r.EngineMetrics != nil {
		s.Properties = append(s.Properties, junitProperty{"engine_metrics", EngineSummary(r.EngineMetrics)})
	}
	checks := extra
	if r.ID != "" {
		checks = append(checks, Checks(r)...)
	}
	for _, c := range checks {
		tc := junitCase{Name: c.Name, Classname: "llmprobe.gate." + r.Burst, Time: "0"}
		problem := &junitProblem{Message: c.Detail, Type: c.Name, Text: c.Detail}
		switch c.Status {
		case StatusFailed:
			tc.Failure = problem
			s.Failures++
		case StatusError:
			tc.Error = problem
			s.Errors++
		case StatusSkipped:
			tc.Skip = &junitProblem{Message: c.Detail}
			s.Skipped++
		case StatusWarning:
			tc.SystemOut = cdata("WARNING: " + c.Detail)
		default:
			tc.SystemOut = cdata(c.Detail)
		}
		s.Cases = append(s.Cases, tc)
	}
	s.Tests = len(s.Cases)
	if r.ID != "" {
		var text bytes.Buffer
		Brief(&text, r)
		s.SystemOut = cdata(text.String())
	}
	counts := s.junitCounts
	counts.Name = "llmprobe gate"
	doc := junitSuites{junitCounts: counts, Suites: []junitSuite{s}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// cdata holds text in a CDATA section, without the characters XML 1.0
// forbids there (control characters from a target's error text).
func cdata(s string) *junitText {
	return &junitText{strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r != 0xFFFE && r != 0xFFFF && (r < 0xD800 || r > 0xDFFF) {
			return r
		}
		return -1
	}, s)}
}

// errorBound is the client's error bound and its parts, for a report that
// measured something ("" for one that did not).
func errorBound(r *report.Report) string {
	if r.ID == "" {
		return ""
	}
	return PageOf(r).BoundText
}
