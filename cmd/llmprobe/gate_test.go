package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/report"
)

func gateConfig(t *testing.T, url, ttft string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gate.yml")
	cfg := fmt.Sprintf(`targets: [{name: sim, url: %q}]
scenarios:
  - {name: s, prompt_tokens: 16, output_tokens: 4, slo: {ttft: %s, target_ratio: 0.9}}
bursts:
  - name: release
    target: sim
    scenarios: [{scenario: s}]
    arrival: {process: poisson, rate: 20}
    requests: 20
    warmup: {requests: 2}
`, url, ttft)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// Exit codes are the contract with release pipelines: 0 passed, 1 a gate
// failed, 2 a usage or configuration error, 3 not measured.
func TestGateExitCodes(t *testing.T) {
	srv, _ := simServer(t)
	storage := t.TempDir()
	output := filepath.Join(t.TempDir(), "report.json")

	out, err := exec.Command(binPath, "gate", "--config.file="+gateConfig(t, srv.URL, "2s"), "--burst=release", "--output="+output, "--storage.path="+storage).CombinedOutput()
	if exitCode(err) != 0 || !strings.Contains(string(out), "gate: passed") || !strings.Contains(string(out), "PASS  slo_ttft") {
		t.Fatalf("lenient gate: exit %d\n%s", exitCode(err), out)
	}
	var rep report.Report
	b, err := os.ReadFile(output)
	if err != nil || json.Unmarshal(b, &rep) != nil || rep.Requests != 20 || !rep.Passed {
		t.Fatalf("report %s: %v %+v", output, err, rep)
	}
	if list, _ := report.NewStore(storage, nil).List(); len(list["release"]) != 1 {
		t.Errorf("stored reports: %v", list)
	}

	out, err = exec.Command(binPath, "gate", "--config.file="+gateConfig(t, srv.URL, "1ms"), "--burst=release", "--storage.path="+storage).CombinedOutput()
	if exitCode(err) != 1 || !strings.Contains(string(out), "FAIL  slo_ttft") {
		t.Errorf("impossible gate: exit %d, want 1\n%s", exitCode(err), out)
	}
	if !strings.Contains(string(out), "regression vs release-") {
		t.Errorf("the second run shows no comparison with the first:\n%s", out)
	}

	// A chosen baseline of another target is no baseline, and the output says why.
	other := filepath.Join(t.TempDir(), "other.json")
	rep.Target = "elsewhere"
	if b, err := json.Marshal(rep); err != nil || os.WriteFile(other, b, 0o600) != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(binPath, "gate", "--config.file="+gateConfig(t, srv.URL, "2s"), "--burst=release", "--storage.path=", "--baseline="+other).CombinedOutput()
	if exitCode(err) != 0 || !strings.Contains(string(out), `regression check skipped: the baseline `+rep.ID+` is not comparable: target "elsewhere", this run "sim"`) {
		t.Errorf("foreign baseline: exit %d\n%s", exitCode(err), out)
	}
	// Without a store: the regression check is skipped, and said so.
	out, err = exec.Command(binPath, "gate", "--config.file="+gateConfig(t, srv.URL, "2s"), "--burst=release", "--storage.path=").CombinedOutput()
	if exitCode(err) != 0 || !strings.Contains(string(out), "regression check skipped: no report store") {
		t.Errorf("no store: exit %d\n%s", exitCode(err), out)
	}
	// A store that cannot be written: the report is not kept, exit 3.
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(binPath, "gate", "--config.file="+gateConfig(t, srv.URL, "2s"), "--burst=release", "--storage.path="+notADir).CombinedOutput()
	if exitCode(err) != 3 || !strings.Contains(string(out), "the report was not stored") {
		t.Errorf("unwritable store: exit %d, want 3\n%s", exitCode(err), out)
	}

	for name, args := range map[string][]string{
		"unknown burst": {"gate", "--config.file=" + gateConfig(t, srv.URL, "2s"), "--burst=nope"},
		"bad config":    {"gate", "--config.file=../../config/testdata/bad_url.yml", "--burst=x"},
		"missing flag":  {"gate", "--config.file=" + gateConfig(t, srv.URL, "2s")},
	} {
		out, err := exec.Command(binPath, args...).CombinedOutput()
		if exitCode(err) != 2 {
			t.Errorf("%s: exit %d, want 2\n%s", name, exitCode(err), out)
		}
	}
}

// After a restart, the stored reports bring back the last-burst gauges, and
// /bursts serves them.
func TestRestartRestoresBurstGauges(t *testing.T) {
	srv, _ := simServer(t)
	storage := t.TempDir()
	cfgPath := gateConfig(t, srv.URL, "2s")
	if out, err := exec.Command(binPath, "gate", "--config.file="+cfgPath, "--burst=release", "--storage.path="+storage).CombinedOutput(); err != nil {
		t.Fatalf("gate: %v\n%s", err, out)
	}
	d := startDaemon(t, "--config.file="+cfgPath, "--storage.path="+storage)
	fams := d.metrics(t)
	if v, ok := sampleValue(fams, "llmprobe_burst_passed", map[string]string{"burst": "release"}); !ok || v != 1 {
		t.Errorf("llmprobe_burst_passed after restart = %v (present %v)", v, ok)
	}
	if _, ok := sampleValue(fams, "llmprobe_burst_latency_seconds", map[string]string{"burst": "release", "metric": "ttft", "percentile": "p99"}); !ok {
		t.Error("no burst latency gauges after restart")
	}
	code, page := d.get("/bursts")
	if code != 200 || !strings.Contains(page, `class="chart percentiles"`) {
		t.Errorf("/bursts (%d) lacks the chart:\n%s", code, page)
	}
	list, _ := report.NewStore(storage, nil).List()
	if code, body := d.get("/bursts/" + list["release"][0] + ".json"); code != 200 || !strings.Contains(body, `"burst": "release"`) {
		t.Errorf("report JSON: %d %s", code, body)
	}
	if code, _ := d.get("/bursts/..%2f..%2fetc%2fpasswd.json"); code != 404 {
		t.Errorf("path escape answered %d", code)
	}

	// Rendered by a real browser: the dumped DOM holds the charts.
	chromium := testkit.Tool(t, "chromium", "apt-get install chromium")
	dom, err := exec.Command(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--dump-dom", d.base+"/bursts").Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	for _, want := range []string{`<svg class="chart percentiles"`, `<svg class="chart ttft-over-time"`, "<circle", "<rect"} {
		if !strings.Contains(string(dom), want) {
			t.Errorf("the rendered DOM lacks %s", want)
		}
	}
}

// A target that refuses connections is not measured: the gate says so, with
// the target's name and the reason, prints no percentile, and exits 3.
func TestGateAgainstARefusedPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	start := time.Now()
	out, err := exec.Command(binPath, "gate", "--config.file="+gateConfig(t, url, "2s"), "--burst=release", "--storage.path="+t.TempDir()).CombinedOutput()
	elapsed := time.Since(start)
	if exitCode(err) != 3 {
		t.Errorf("exit %d, want 3\n%s", exitCode(err), out)
	}
	for _, want := range []string{"target sim", "connection refused", "connection_refused", "the burst was not sent"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "0.0ms") || strings.Contains(string(out), "p99") {
		t.Errorf("percentiles printed for a target that was never measured:\n%s", out)
	}
	t.Logf("the gate gave up after %s", elapsed.Round(time.Millisecond))
	if elapsed > 5*time.Second {
		t.Errorf("the gate took %s against a refused port", elapsed)
	}
}
