package render_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/reporttest"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/render"
)

// A check fails exactly where the verdict failed, and says why.
func TestChecksFollowTheVerdict(t *testing.T) {
	before, after := reporttest.GoldenPair(t)
	for _, r := range []*report.Report{before, after} {
		failed := 0
		for _, c := range render.Checks(r) {
			if c.Status == render.StatusFailed {
				failed++
				if c.Detail == "" {
					t.Errorf("%s failed without a reason", c.Name)
				}
			}
		}
		if (failed == 0) != r.Passed {
			t.Errorf("report passed=%v with %d failed checks: %+v", r.Passed, failed, render.Checks(r))
		}
	}
}

func TestMarkdownSummary(t *testing.T) {
	before, after := reporttest.GoldenPair(t)
	var buf bytes.Buffer
	if err := render.Markdown(&buf, before); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## ✅ llmprobe gate: burst `b` passed", "| ✅ | slo_ttft |", "| ttft | 20 |", fmt.Sprintf("Goodput %.1f%% of requests", 100**before.Goodput.Ratio)} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("passed summary lacks %q:\n%s", want, buf.String())
		}
	}
	buf.Reset()
	if err := render.Markdown(&buf, after); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## ❌ llmprobe gate: burst `b` failed", "| ❌ | regression_ttft_p50 |", "engine llmprobe-sim 0.12.0", "Most frequent failure:"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("failed summary lacks %q:\n%s", want, buf.String())
		}
	}
	if strings.Contains(buf.String(), "](") || strings.Contains(buf.String(), "://") {
		t.Errorf("the summary carries a link:\n%s", buf.String())
	}
	// Every table row has as many cells as its header: no stray pipe from
	// network text broke one.
	for _, line := range strings.Split(buf.String(), "\n") {
		if n := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|"); strings.HasPrefix(line, "| ") && n != 4 && n != 8 {
			t.Errorf("a row with the wrong number of cells: %s", line)
		}
	}

	stub := &report.Report{Burst: "b", Target: "t"}
	buf.Reset()
	if err := render.Markdown(&buf, stub, render.Check{Name: "preflight", Status: render.StatusError, Detail: "dial: connection | refused"}); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); !strings.Contains(got, "not measured") || !strings.Contains(got, `connection \| refused`) || strings.Contains(got, "p50") {
		t.Errorf("unmeasured summary:\n%s", got)
	}
}
