package main

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	junit "github.com/joshdk/go-junit"

	"github.com/llmprobe/llmprobe/compare"
	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/sim"
)

// decodeSim serves a sim whose decode steps take slower times the default's.
func decodeSim(t *testing.T, slower float64) string {
	t.Helper()
	return serveSim(t, func(c *sim.Config) { slowerDecode(c, slower) })
}

// slowerDecode makes c's decode steps take slower times what they did.
func slowerDecode(c *sim.Config, slower float64) {
	c.DecodeBase = time.Duration(float64(c.DecodeBase) * slower)
	c.DecodePerSeq = time.Duration(float64(c.DecodePerSeq) * slower)
}

// serveSim serves a sim of the default configuration as mutate changes it.
func serveSim(t *testing.T, mutate func(*sim.Config)) string {
	t.Helper()
	cfg := sim.DefaultConfig()
	mutate(&cfg)
	engine, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(engine.Handler())
	t.Cleanup(func() { srv.Close(); engine.Close() })
	return srv.URL
}

// compareConfig names three sims: stable, its twin, and next, whose
// decode is 40 % slower. Their decode steps are 3 times the default's, so
// that a loaded CI machine's timer delays stay small beside them, and the
// objective is loose, so that its client delays stay within the client's
// bound.
func compareConfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "compare.yml")
	cfg := fmt.Sprintf(`targets:
  - {name: stable, url: %q}
  - {name: twin, url: %q}
  - {name: next, url: %q}
scenarios:
  - {name: chat, prompt_tokens: {distribution: uniform, min: 32, max: 128}, output_tokens: 16, slo: {ttft: 5s}}
bursts:
  - name: release
    target: stable
    scenarios: [{scenario: chat}]
    arrival: {process: poisson, rate: 20}
    requests: 80
    warmup: {requests: 3}
    seed: 9
  - name: curve
    target: stable
    scenarios: [{scenario: chat}]
    arrival: {process: poisson, rate: 20}
    sweep: {rates: [5, 10]}
    requests: 40
`, decodeSim(t, 3), decodeSim(t, 3), decodeSim(t, 3*1.4))
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Against a candidate with 40 % slower decode, compare exits 1 naming TPOT
// worse with its interval, in every file it writes; against an identical
// one, 0: every judged metric shown within its tolerance.
func TestCompareTwoSims(t *testing.T) {
	cfg, dir := compareConfig(t), t.TempDir()
	files := func(name string) []string {
		p := filepath.Join(dir, name)
		return []string{"--output=" + p + ".json", "--output.junit=" + p + ".xml", "--output.markdown=" + p + ".md", "--output.html=" + p + ".html"}
	}
	out, err := exec.Command(binPath, append([]string{"compare", "--config.file=" + cfg, "--burst=release", "--baseline=stable", "--candidate=next"}, files("slow")...)...).CombinedOutput()
	if exitCode(err) != 1 || !strings.Contains(string(out), "compare: candidate next vs baseline stable: worse: ") || !strings.Contains(string(out), "TPOT p50 +") {
		t.Fatalf("slower candidate: exit %d, want 1\n%s", exitCode(err), out)
	}
	var c compare.Comparison
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "slow.json"))), &c); err != nil {
		t.Fatal(err)
	}
	tpot := c.Metrics[slices.IndexFunc(c.Metrics, func(m decide.Metric) bool { return m.Name() == "tpot p50" })]
	if tpot.Verdict != decide.Worse || !tpot.Judged || *tpot.Lower <= 1.1 || *tpot.Upper >= 1.7 || tpot.Pairs != 480 || len(tpot.Rounds) != 6 {
		t.Errorf("tpot p50 of a 40 %% slower decode: %+v", tpot)
	}
	if !strings.Contains(string(out), fmt.Sprintf("TPOT p50 %+.1f %% (95 %% CI %+.1f … %+.1f %%)", 100*(*tpot.Estimate-1), 100*(*tpot.Lower-1), 100*(*tpot.Upper-1))) {
		t.Errorf("the headline lacks TPOT's interval:\n%s", out)
	}
	if !slices.Equal(c.Order[:4], []string{"baseline", "candidate", "candidate", "baseline"}) || len(c.Order) != 12 || c.Baseline.Requests != 480 || c.Candidate.URL == c.Baseline.URL {
		t.Errorf("order %v, baseline %+v", c.Order, c.Baseline)
	}
	failed := map[string]string{}
	for _, tc := range readJUnit(t, filepath.Join(dir, "slow.xml")).Tests {
		if tc.Status == junit.StatusFailed {
			failed[tc.Name] = tc.Message
		}
	}
	if !strings.HasPrefix(failed["tpot p50"], "TPOT p50 worse: +") {
		t.Errorf("junit failures: %v", failed)
	}
	if md := readFile(t, filepath.Join(dir, "slow.md")); !strings.Contains(md, "| tpot p50 | 480 |") || !strings.Contains(md, "**worse (beyond 10 %)**") {
		t.Errorf("summary:\n%s", md)
	}
	// The page as a browser renders it: both sides' distributions of the 4
	// latencies; a screenshot in the test's artifacts.
	browser, page := testkit.Chromium(t), "file://"+filepath.Join(dir, "slow.html")
	if dom := browser.DOM(t, page); strings.Count(dom, `<polyline class="side"`) != 8 || !strings.Contains(dom, "<h1>worse: candidate next vs baseline stable</h1>") {
		t.Errorf("the page draws %d distributions, want both sides of 4 metrics:\n%s", strings.Count(dom, `<polyline class="side"`), dom)
	}
	if wrapped := browser.WrappedCells(t, readFile(t, filepath.Join(dir, "slow.html")), 1000); len(wrapped) > 0 {
		t.Errorf("the comparison page wraps %d numbers in Chromium: %q", len(wrapped), wrapped)
	}
	browser.Screenshot(t, page, filepath.Join(t.ArtifactDir(), "compare.png"))

	out, err = exec.Command(binPath, append([]string{"compare", "--config.file=" + cfg, "--burst=release", "--candidate=twin"}, files("same")...)...).CombinedOutput()
	if exitCode(err) != 0 || !strings.Contains(string(out), "compare: candidate twin vs baseline stable: within tolerance: every judged metric is shown within its tolerance") {
		t.Fatalf("identical candidate: exit %d, want 0\n%s", exitCode(err), out)
	}
	var same compare.Comparison
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "same.json"))), &same); err != nil {
		t.Fatal(err)
	}
	for _, m := range same.Metrics {
		if m.Verdict == decide.Worse || m.Verdict == decide.Better {
			t.Errorf("%s of identical sims is %s:\n%s", m.Name(), m.Verdict, out)
		}
	}
}

// Usage errors exit 2 before anything is sent; a side that cannot answer
// exits 3, said in the JUnit file too.
func TestCompareExitCodes(t *testing.T) {
	cfg := compareConfig(t)
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"odd rounds":     {[]string{"--rounds=3"}, "--rounds=3: must be even"},
		"one round":      {[]string{"--rounds=0"}, "--rounds=0: must be even"},
		"unknown target": {[]string{"--candidate=nope"}, `--candidate: unknown target "nope"; configured: stable, twin, next`},
		"bad url":        {[]string{"--candidate.url=http://x/?key=1"}, "--candidate.url: must not have a query"},
		"unknown burst":  {[]string{"--burst=nope"}, `unknown burst "nope"`},
		"sweep":          {[]string{"--burst=curve"}, "burst curve sweeps rates (5, 10/s) and a comparison runs one: give --rate"},
		"bad rate":       {[]string{"--burst=curve", "--rate=-1"}, "--rate: "},
	} {
		if !slices.ContainsFunc(tc.args, func(a string) bool { return strings.HasPrefix(a, "--burst=") }) {
			tc.args = append(tc.args, "--burst=release")
		}
		args := append([]string{"compare", "--config.file=" + cfg}, tc.args...)
		out, err := exec.Command(binPath, args...).CombinedOutput()
		if exitCode(err) != 2 || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s: exit %d, want 2 and %q\n%s", name, exitCode(err), tc.want, out)
		}
	}
	junitPath := filepath.Join(t.TempDir(), "junit.xml")
	out, err := exec.Command(binPath, "compare", "--config.file="+cfg, "--burst=release", "--candidate.url="+testkit.RefusedURL(t), "--output.junit="+junitPath).CombinedOutput()
	if exitCode(err) != 3 || !strings.Contains(string(out), "llmprobe compare: candidate: preflight request to target stable") {
		t.Fatalf("unreachable candidate: exit %d, want 3\n%s", exitCode(err), out)
	}
	if s := readJUnit(t, junitPath); s.Totals.Error != 1 || !strings.Contains(s.Tests[len(s.Tests)-1].Error.Error(), "not measured: candidate: preflight") {
		t.Errorf("junit: %+v", s)
	}
}
