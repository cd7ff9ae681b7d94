package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/report"
)

// passedLine is a passed gate's first line: the verdict and why.
var passedLine = regexp.MustCompile(`^gate: passed \(\d+ gates? held(, \d+ skipped)?\)$`)

// The gate reads top-down: the verdict and why first, then the gates and a
// short table; the details come with --verbose. Progress counts to one
// total, warmup included, from its first line.
func TestGateReadsTopDown(t *testing.T) {
	srv, _ := simServer(t)
	code, out, errOut := runGate(t, "--config.file="+gateConfig(t, srv.URL, "2s"), "--burst=release")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || !passedLine.MatchString(lines[0]) || len(lines) > 20 {
		t.Fatalf("exit %d, %d lines, first %q; want 0, at most 20, \"gate: passed (N gates held…)\":\n%s%s", code, len(lines), lines[0], out, errOut)
	}
	details := []string{"95% intervals of the percentiles", "client error bound p99", "TTFT split over", "prefix cache:", "dispatch_delay"}
	for _, d := range details {
		if strings.Contains(out, d) {
			t.Errorf("the summary shows the detail %q:\n%s", d, out)
		}
	}
	for _, want := range []string{"PASS  slo_ttft", "ttft", "itl", "tpot", "e2e", "--verbose"} {
		if !strings.Contains(out, want) {
			t.Errorf("the summary lacks %q:\n%s", want, out)
		}
	}
	progress := regexp.MustCompile(`release: (\d+)/(\d+) requests done`).FindAllStringSubmatch(errOut, -1)
	if len(progress) == 0 {
		t.Errorf("no progress on stderr:\n%s", errOut)
	}
	for _, p := range progress {
		if p[2] != "42" { // 40 requests and 2 of warmup
			t.Errorf("progress %s/%s: the total is not the plan's 42:\n%s", p[1], p[2], errOut)
		}
	}

	code, out, errOut = runGate(t, "--config.file="+gateConfig(t, srv.URL, "2s"), "--burst=release", "--verbose")
	if code != 0 || !passedLine.MatchString(strings.SplitN(out, "\n", 2)[0]) {
		t.Fatalf("--verbose: exit %d:\n%s%s", code, out, errOut)
	}
	for _, d := range details {
		if !strings.Contains(out, d) {
			t.Errorf("--verbose lacks the detail %q:\n%s", d, out)
		}
	}

	code, out, errOut = runGate(t, "--config.file="+gateConfig(t, slowSim(t), "200ms"), "--burst=release")
	if code != 1 || !strings.HasPrefix(out, "gate: FAILED — slo_ttft 0.0% < 90%\n") {
		t.Errorf("an impossible objective: exit %d, want 1 and the failing gate first:\n%s%s", code, out, errOut)
	}
}

// A dead target's gate leaves CI its artifacts: a report JSON that says
// why nothing was measured, the verdict on stdout, exit 3; every file 0644.
func TestDeadTargetLeavesAReport(t *testing.T) {
	dir := t.TempDir()
	output, junitPath, md := filepath.Join(dir, "r.json"), filepath.Join(dir, "j.xml"), filepath.Join(dir, "s.md")
	code, out, errOut := runGate(t, "--config.file="+gateConfig(t, testkit.RefusedURL(t), "2s"), "--burst=release",
		"--output="+output, "--output.junit="+junitPath, "--output.markdown="+md)
	if code != 3 || !strings.HasPrefix(out, "gate: not measured — preflight request to target sim") {
		t.Errorf("exit %d, stdout %q; want 3 and the verdict\n%s", code, out, errOut)
	}
	var rep report.Report
	if err := json.Unmarshal([]byte(readFile(t, output)), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != decide.NotMeasured || !strings.Contains(rep.VerdictReason, "connection refused") || rep.Burst != "release" || rep.Target != "sim" {
		t.Errorf("the report says %q: %q (burst %q, target %q)", rep.Verdict, rep.VerdictReason, rep.Burst, rep.Target)
	}
	for _, p := range []string{output, junitPath, md} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: %v, mode %v, want 0644", p, err, fi.Mode().Perm())
		}
	}
}
