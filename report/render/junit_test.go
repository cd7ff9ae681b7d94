package render_test

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	junit "github.com/joshdk/go-junit"

	"github.com/llmprobe/llmprobe/internal/reporttest"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/render"
)

// What a CI system's reader sees, read with encoding/xml on its own terms.
type readSuites struct {
	XMLName xml.Name `xml:"testsuites"`
	Tests   int      `xml:"tests,attr"`
	Suites  []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Skipped  int    `xml:"skipped,attr"`
		Props    []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Cases []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
			Skipped   *struct{} `xml:"skipped"`
			SystemOut string    `xml:"system-out"`
		} `xml:"testcase"`
		SystemOut string `xml:"system-out"`
	} `xml:"testsuite"`
}

func TestJUnitIsReadByJUnitParsers(t *testing.T) {
	_, after := reporttest.GoldenPair(t)
	after.Overrides = []string{"--rate=10"}
	var buf bytes.Buffer
	if err := render.JUnit(&buf, after); err != nil {
		t.Fatal(err)
	}
	var doc readSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("encoding/xml: %v\n%s", err, buf.Bytes())
	}
	if len(doc.Suites) != 1 {
		t.Fatalf("%d suites", len(doc.Suites))
	}
	s := doc.Suites[0]
	props := map[string]string{}
	for _, p := range s.Props {
		props[p.Name] = p.Value
	}
	if s.Name != "b" || props["report_id"] != after.ID || props["target"] != "t" || props["model"] != "m" || props["engine_version"] != "0.12.0" || props["overrides"] != "--rate=10" {
		t.Errorf("suite %q, properties %v", s.Name, props)
	}
	failures := map[string]string{}
	for _, c := range s.Cases {
		if c.Failure != nil {
			failures[c.Name] = c.Failure.Message
		}
	}
	if !strings.Contains(failures["regression_ttft_p50"], "limit +10%;") || !strings.Contains(failures["slo_ttft"], "of 20 requests met ttft") || len(failures) != s.Failures || s.Tests != len(s.Cases) || doc.Tests != s.Tests {
		t.Errorf("failures %v (counted %d), tests %d of %d cases", failures, s.Failures, s.Tests, len(s.Cases))
	}
	if !strings.Contains(s.SystemOut, "gate: FAILED") {
		t.Errorf("the suite's output lacks the text report:\n%s", s.SystemOut)
	}
	if !strings.Contains(props["too_few"], "20 samples, too few for p90, p95, p99, p99.9") {
		t.Errorf("JUnit does not say what rests on too few samples: property %q", props["too_few"])
	}

	// A JUnit reader from outside the project agrees.
	suites, err := junit.Ingest(buf.Bytes())
	if err != nil || len(suites) != 1 {
		t.Fatalf("go-junit: %v, %d suites", err, len(suites))
	}
	js := suites[0]
	if js.Name != "b" || js.Properties["report_id"] != after.ID || js.Totals.Failed != len(failures) || js.Totals.Error != 0 || js.Totals.Tests != len(render.Checks(after)) {
		t.Errorf("go-junit read %q, properties %v, totals %+v", js.Name, js.Properties, js.Totals)
	}
	for _, tc := range js.Tests {
		if tc.Status == junit.StatusFailed && tc.Message != failures[tc.Name] {
			t.Errorf("go-junit: %s failed with %q, want %q", tc.Name, tc.Message, failures[tc.Name])
		}
	}

	// A run that measured nothing: an error, with the reason, and no table.
	stub := &report.Report{Burst: "b", Target: "t"}
	buf.Reset()
	if err := render.JUnit(&buf, stub, render.Check{Name: "preflight", Status: render.StatusError, Detail: "connection refused"}); err != nil {
		t.Fatal(err)
	}
	suites, err = junit.Ingest(buf.Bytes())
	if err != nil || len(suites) != 1 || suites[0].Totals.Error != 1 || suites[0].Totals.Tests != 1 || suites[0].Tests[0].Message != "connection refused" {
		t.Errorf("unmeasured run: %v %+v\n%s", err, suites, buf.Bytes())
	}

	// Text from the network cannot break the document.
	buf.Reset()
	if err := render.JUnit(&buf, stub, render.Check{Name: "odd", Status: render.StatusWarning, Detail: "a ]]> b \x01 c <d/>"}); err != nil {
		t.Fatal(err)
	}
	doc = readSuites{}
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil || doc.Suites[0].Cases[0].SystemOut != "WARNING: a ]]> b  c <d/>" {
		t.Errorf("odd text: %v %+v\n%s", err, doc, buf.Bytes())
	}
}
