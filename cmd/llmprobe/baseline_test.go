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

	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/sim"
)

// simDecoding is a sim whose decode step with one sequence takes decode;
// its prefill is short, so that TPOT is mostly decode.
func simDecoding(t *testing.T, decode time.Duration) *httptest.Server {
	srv, _ := testkit.StartSim(t, func(c *sim.Config) { c.DecodeBase, c.PrefillBase = decode, time.Millisecond })
	return srv
}

// writeTemp writes text to a file name in a new temporary folder.
func writeTemp(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// baselineConfig has two bursts of 20 requests on one target: release,
// with a TPOT regression gate, and nightly, at another rate.
func baselineConfig(t *testing.T, url string) string {
	burst := func(name string, rate int, extra string) string {
		return fmt.Sprintf(`
  - name: %s
    target: sim
    scenarios: [{scenario: s}]
    arrival: {process: poisson, rate: %d}
    requests: 20
    warmup: {requests: 2}%s`, name, rate, extra)
	}
	return writeTemp(t, "baseline.yml", fmt.Sprintf(`targets: [{name: sim, url: %q}]
scenarios:
  - {name: s, prompt_tokens: 16, output_tokens: 16, slo: {ttft: 2s, target_ratio: 0.8}}
bursts:%s%s
`, url, burst("release", 20, "\n    max_regression: [{metric: tpot, quantile: p50, max_increase: 0.1, spread: 0.02}]"), burst("nightly", 10, "")))
}

// runGate runs `llmprobe gate` with args and gives its exit code and its
// stdout, the report table.
func runGate(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"gate", "--storage.path="}, args...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return exitCode(err), stdout.String(), stderr.String()
}

// A named baseline is binding: one from another burst (another rate) fails
// the run with exit 3 and says what differs, first; one from another URL
// is compared, and a candidate 40 % slower in decode fails its regression
// gate. 20 requests mark every percentile past p50 "too few".
func TestNamedBaselineIsBinding(t *testing.T) {
	base, slow := simDecoding(t, 20*time.Millisecond), simDecoding(t, 28*time.Millisecond)
	cfg := baselineConfig(t, base.URL)
	dir := t.TempDir()
	release, nightly := filepath.Join(dir, "release.json"), filepath.Join(dir, "nightly.json")

	code, out, errOut := runGate(t, "--config.file="+cfg, "--burst=release", "--output="+release, "--verbose")
	if code != 0 {
		t.Fatalf("first run: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "ms (too few)") || !strings.Contains(out, "ttft, tpot, e2e, dispatch_delay: 20 samples, too few for p90, p95, p99, p99.9 (needs 36, 72, 368, 3,688)") {
		t.Errorf("a 20-request run does not mark its p99 too few:\n%s", out)
	}
	var rep report.Report
	if b, err := os.ReadFile(release); err != nil || json.Unmarshal(b, &rep) != nil {
		t.Fatalf("report: %v", err)
	}
	if s := rep.Latency["ttft"]; s.Count != 20 || !slices.Contains(s.TooFew, "p99") || slices.Contains(s.TooFew, "p50") || s.Intervals["p99"].Hi != nil || s.Intervals["p50"].Hi == nil {
		t.Errorf("ttft summary in JSON: %+v", s)
	}
	if g := rep.Goodput; g.RatioInterval == nil || g.Judged != 20 || *g.RatioInterval.Lo > *g.Ratio || *g.RatioInterval.Hi < *g.Ratio {
		t.Errorf("goodput %+v: want its Wilson interval around the ratio", g)
	}

	if code, out, errOut := runGate(t, "--config.file="+cfg, "--burst=nightly", "--output="+nightly); code != 0 {
		t.Fatalf("nightly: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runGate(t, "--config.file="+cfg, "--burst=release", "--baseline="+nightly)
	first, _, _ := strings.Cut(out, "\n")
	if code != 3 || !strings.HasPrefix(first, "REFUSED the baseline nightly-") || !strings.Contains(first, "rate 10/s, this run 20/s") ||
		!strings.Contains(errOut, "not comparable") || !strings.Contains(out, "FAIL  baseline:") {
		t.Errorf("a named baseline of another burst: exit %d, want 3 with the reason first\n%s%s", code, out, errOut)
	}
	// Refused before anything was sent: no preflight, no progress.
	if !strings.Contains(errOut, "the burst was not sent") || strings.Contains(errOut, "preflight") || strings.Contains(errOut, "requests done") {
		t.Errorf("a named baseline of another burst was refused after the burst ran:\n%s", errOut)
	}

	// Another URL, the same request set: compared, said after the verdict, and the
	// slower decode fails the TPOT gate.
	code, out, errOut = runGate(t, "--config.file="+cfg, "--burst=release", "--baseline="+release, "--target.url="+slow.URL)
	_, rest, _ := strings.Cut(out, "\n") // said right after the verdict
	first, _, _ = strings.Cut(rest, "\n")
	if code != 1 || !strings.Contains(first, "measured elsewhere, compared all the same: URL the target's own, this run "+slow.URL) ||
		!strings.Contains(out, "FAIL  regression_tpot_p50:") || !strings.Contains(out, "spread 2.0% between runs assumed (the gate's spread") || !strings.Contains(out, "regression vs "+rep.ID) {
		t.Errorf("a 40%% slower candidate against a comparable baseline: exit %d, want 1\n%s%s", code, out, errOut)
	}
	// The same target again passes against it.
	if code, out, errOut := runGate(t, "--config.file="+cfg, "--burst=release", "--baseline="+release); code != 0 || !strings.Contains(out, "PASS  regression_tpot_p50:") {
		t.Errorf("the same target against its own baseline: exit %d, want 0\n%s%s", code, out, errOut)
	}
	// A file that is not a report is a usage error.
	if code, out, errOut := runGate(t, "--config.file="+cfg, "--burst=release", "--baseline="+cfg); code != 2 || !strings.Contains(errOut, "is not a burst report") {
		t.Errorf("a baseline that is not a report: exit %d, want 2\n%s%s", code, out, errOut)
	}
}
