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

	junit "github.com/joshdk/go-junit"

	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/store"
	"github.com/llmprobe/llmprobe/sim"
)

func gateConfig(t *testing.T, url, ttft string) string {
	return writeTemp(t, "gate.yml", fmt.Sprintf(`targets: [{name: sim, url: %q}]
scenarios:
  - {name: s, prompt_tokens: 16, output_tokens: 4, slo: {ttft: %s, target_ratio: 0.9}}
bursts:
  - name: release
    target: sim
    scenarios: [{scenario: s}]
    arrival: {process: poisson, rate: 20}
    requests: 40
    warmup: {requests: 2}
`, url, ttft))
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

// slowSim is a sim whose first token takes 500 ms: it fails a 200 ms TTFT
// objective by far more than the client adds (a tenth of it, 20 ms), so
// the failure is the target's, never inconclusive.
func slowSim(t *testing.T) string {
	return serveSim(t, func(c *sim.Config) { c.PrefillBase = 500 * time.Millisecond })
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
	if err != nil || json.Unmarshal(b, &rep) != nil || rep.Requests != 40 || !rep.Passed {
		t.Fatalf("report %s: %v %+v", output, err, rep)
	}
	if list, _ := store.New(storage, nil).List(); len(list["release"]) != 1 {
		t.Errorf("stored reports: %v", list)
	}

	out, err = exec.Command(binPath, "gate", "--config.file="+gateConfig(t, slowSim(t), "200ms"), "--burst=release", "--storage.path="+storage).CombinedOutput()
	if exitCode(err) != 1 || !strings.Contains(string(out), "FAIL  slo_ttft") || !strings.Contains(string(out), "every miss is larger than llmprobe's own delay in it: certainly the target's") {
		t.Errorf("impossible gate: exit %d, want 1 and the misses certain\n%s", exitCode(err), out)
	}
	if !strings.Contains(string(out), "regression vs release-") {
		t.Errorf("the second run shows no comparison with the first:\n%s", out)
	}

	// A chosen baseline of another target is compared (a candidate against
	// production is the point), and the output says so first; one of
	// another model cannot be used, and the run fails with exit 3.
	other := filepath.Join(t.TempDir(), "other.json")
	rep.Target = "elsewhere"
	if b, err := json.Marshal(rep); err != nil || os.WriteFile(other, b, 0o600) != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(binPath, "gate", "--config.file="+gateConfig(t, srv.URL, "2s"), "--burst=release", "--storage.path=", "--baseline="+other).Output()
	if exitCode(err) != 0 || !strings.Contains(string(out), "\n"+`the baseline `+rep.ID+` measured elsewhere, compared all the same: target elsewhere, this run sim`) || !strings.Contains(string(out), "regression vs "+rep.ID) {
		t.Errorf("baseline of another target: exit %d\n%s", exitCode(err), out)
	}
	rep.Model = "another-model"
	if b, err := json.Marshal(rep); err != nil || os.WriteFile(other, b, 0o600) != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(binPath, "gate", "--config.file="+gateConfig(t, srv.URL, "2s"), "--burst=release", "--storage.path=", "--baseline="+other).CombinedOutput()
	if exitCode(err) != 3 || !strings.Contains(string(out), `REFUSED the baseline `+rep.ID+` you named is not comparable: model "another-model", this run`) {
		t.Errorf("baseline of another model: exit %d, want 3\n%s", exitCode(err), out)
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
	if code != 200 || !strings.Contains(page, `class="chart percentiles percentiles-ttft"`) || !strings.Contains(page, "p99 from 40 samples: too few, needs 368") {
		t.Errorf("/bursts (%d) lacks the chart:\n%s", code, page)
	}
	list, _ := store.New(storage, nil).List()
	if code, body := d.get("/bursts/" + list["release"][0] + ".json"); code != 200 || !strings.Contains(body, `"burst": "release"`) {
		t.Errorf("report JSON: %d %s", code, body)
	}
	if code, _ := d.get("/bursts/..%2f..%2fetc%2fpasswd.json"); code != 404 {
		t.Errorf("path escape answered %d", code)
	}

	// Rendered by a real browser: the dumped DOM holds the charts.
	dom := testkit.Chromium(t).DOM(t, d.base+"/bursts")
	for _, want := range []string{`<svg class="chart percentiles percentiles-ttft"`, `<svg class="chart percentiles percentiles-e2e"`, `<svg class="chart ttft-over-time"`, "<circle", "<rect"} {
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

// readJUnit reads a JUnit file with go-junit, a reader from outside the project.
func readJUnit(t *testing.T, path string) junit.Suite {
	t.Helper()
	suites, err := junit.IngestFile(path)
	if err != nil || len(suites) != 1 {
		t.Fatalf("%s: %v, %d suites", path, err, len(suites))
	}
	return suites[0]
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The flags point a configured burst elsewhere for one run: another URL and
// model, rate and duration. The report says so, the gate's verdicts go to
// JUnit and a step summary, and progress in a CI log is a few full lines.
func TestGateOverridesAndCIOutputs(t *testing.T) {
	srv, _ := simServer(t)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "gate.yml")
	cfg := fmt.Sprintf(`targets: [{name: prod, url: %q, model: retired-model}]
scenarios:
  - {name: s, prompt_tokens: 16, output_tokens: 4, slo: {ttft: 2s, target_ratio: 0.9}}
bursts:
  - name: release-check
    target: prod
    scenarios: [{scenario: s}]
    arrival: {process: poisson, rate: 1}
    requests: 5
    sweep: {rates: [1, 2]}
`, testkit.RefusedURL(t))
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	output, junitPath, mdPath := filepath.Join(dir, "r.json"), filepath.Join(dir, "junit.xml"), filepath.Join(dir, "summary.md")
	cmd := exec.Command(binPath, "gate", "--config.file="+cfgPath, "--burst=release-check", "--storage.path=",
		"--target.url="+srv.URL, "--target.model=sim-model", "--rate=20", "--duration=6s",
		"--output="+output, "--output.junit="+junitPath, "--output.markdown="+mdPath)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); exitCode(err) != 0 {
		t.Fatalf("exit %d\n%s\n%s", exitCode(err), stdout.String(), stderr.String())
	}
	for _, want := range []string{"--rate replaces the sweep of burst release-check (1, 2/s): one run at 20/s", "overridden for this run: --target.url=" + srv.URL + " --target.model=sim-model --rate=20 --duration=6s"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	// stderr is a pipe here: full lines, a few of them, never a carriage return.
	if strings.Contains(stderr.String(), "\r") {
		t.Errorf("progress rewrote a line in a log:\n%q", stderr.String())
	}
	progress := 0
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, "requests done") {
			progress++
		}
	}
	// A line every 5 s of a run past 6 s, and one at its end.
	if progress < 2 || progress > 3 {
		t.Errorf("%d progress lines for a 6 s run, want 2 or 3:\n%s", progress, stderr.String())
	}

	var rep report.Report
	if err := json.Unmarshal([]byte(readFile(t, output)), &rep); err != nil {
		t.Fatal(err)
	}
	arrival, _ := rep.Config["arrival"].(map[string]any)
	if rep.Model != "sim-model" || rep.Rate != 20 || rep.Sweep != nil || arrival["rate"] != 20.0 || rep.Config["duration"] != "6s" || rep.Requests < 60 ||
		strings.Join(rep.Overrides, " ") != "--target.url="+srv.URL+" --target.model=sim-model --rate=20 --duration=6s" {
		t.Errorf("report: model %q rate %v sweep %v config %v requests %d overrides %v", rep.Model, rep.Rate, rep.Sweep, rep.Config, rep.Requests, rep.Overrides)
	}
	if !strings.Contains(stdout.String(), "overridden for this run: --target.url=") {
		t.Errorf("the table does not say the run was overridden:\n%s", stdout.String())
	}

	s := readJUnit(t, junitPath)
	if s.Name != "release-check" || s.Properties["report_id"] != rep.ID || s.Properties["target"] != "prod" || s.Properties["model"] != "sim-model" ||
		s.Properties["engine_version"] == "" || s.Totals.Failed != 0 || s.Totals.Error != 0 || s.Totals.Tests < 4 {
		t.Errorf("junit: %q %v %+v", s.Name, s.Properties, s.Totals)
	}
	if md := readFile(t, mdPath); !strings.Contains(md, "## ✅ llmprobe gate: burst `release-check` passed") || !strings.Contains(md, "| ✅ | slo_ttft |") ||
		!strings.Contains(md, "Overridden for this run: `--target.url=") {
		t.Errorf("summary:\n%s", md)
	}
}

// Exit 1 and 3 write both files too, with the reason.
func TestGateCIOutputsOnFailure(t *testing.T) {
	dir := t.TempDir()
	junitPath, mdPath := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "summary.md")
	ci := []string{"--storage.path=", "--output.junit=" + junitPath, "--output.markdown=" + mdPath}

	out, err := exec.Command(binPath, append([]string{"gate", "--config.file=" + gateConfig(t, slowSim(t), "200ms"), "--burst=release"}, ci...)...).CombinedOutput()
	if exitCode(err) != 1 {
		t.Fatalf("exit %d, want 1\n%s", exitCode(err), out)
	}
	s := readJUnit(t, junitPath)
	failed := map[string]string{}
	for _, tc := range s.Tests {
		if tc.Status == junit.StatusFailed {
			failed[tc.Name] = tc.Message
		}
	}
	if len(failed) != 1 || !strings.Contains(failed["slo_ttft"], "of 40 requests met ttft <= 200ms; the target is 90.00%") || s.Totals.Failed != 1 {
		t.Errorf("junit failures %v, totals %+v", failed, s.Totals)
	}
	if md := readFile(t, mdPath); !strings.Contains(md, "## ❌ llmprobe gate: burst `release` failed") || !strings.Contains(md, "| ❌ | slo_ttft |") {
		t.Errorf("summary:\n%s", md)
	}

	out, err = exec.Command(binPath, append([]string{"gate", "--config.file=" + gateConfig(t, testkit.RefusedURL(t), "2s"), "--burst=release"}, ci...)...).CombinedOutput()
	if exitCode(err) != 3 {
		t.Fatalf("exit %d, want 3\n%s", exitCode(err), out)
	}
	s = readJUnit(t, junitPath)
	if s.Totals.Error != 1 || s.Totals.Tests != 1 || s.Tests[0].Name != "preflight" || !strings.Contains(s.Tests[0].Message, "connection refused") || s.Properties["target"] != "sim" {
		t.Errorf("junit of an unmeasured target: %+v", s)
	}
	if md := readFile(t, mdPath); !strings.Contains(md, "not measured") || !strings.Contains(md, "connection refused") {
		t.Errorf("summary:\n%s", md)
	}
}

// Bad overrides and burst names are usage errors (exit 2) that say what is
// wrong and what is allowed, and never show a URL's credentials.
func TestGateUsageErrors(t *testing.T) {
	cfgPath := gateConfig(t, testkit.RefusedURL(t), "2s")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--burst=relase"}, `unknown burst "relase" (did you mean "release"?); configured: release`},
		{[]string{"--burst=release", "--rate=1e9"}, "--rate: 1e+09 must be within [0.001, 100000] requests per second"},
		{[]string{"--burst=release", "--rate=-1"}, "--rate: -1 must be within [0.001, 100000]"},
		{[]string{"--burst=release", "--duration=72h"}, "--duration: 3d must be within [1s, 1d]"},
		{[]string{"--burst=release", "--rate=5000", "--duration=12h"}, "burst release with --rate=5000 --duration=12h0m0s: plans up to"},
		{[]string{"--burst=release", "--target.url=http://admin:hunter22@staging:8000"}, "--target.url: must not carry credentials"},
		{[]string{"--burst=release", "--target.url=ftp://staging"}, `--target.url: "ftp://staging" must be an absolute http or https URL`},
		{[]string{"--burst=release", "--push.url=http://admin:hunter22@pushgateway:9091"}, "--push.url holds credentials"},
		{[]string{"--burst=release", "--push.url=http://pushgateway:9091", "--push.release=v1/2"}, `--push.release="v1/2": letters, digits and . _ + - only`},
		{[]string{"--burst=release", "--push.release=v1"}, "--push.http-config.file and --push.release need --push.url"},
		{[]string{"--burst=release", "--push.url=http://pushgateway:9091", "--burst.shard=0/2", "--burst.start=" + time.Now().Add(time.Minute).UTC().Format(time.RFC3339)},
			"--push.url with --burst.shard=0/2: a shard's report is a share of the burst"},
	} {
		out, err := exec.Command(binPath, append([]string{"gate", "--config.file=" + cfgPath, "--storage.path="}, tc.args...)...).CombinedOutput()
		if exitCode(err) != 2 || !strings.Contains(string(out), tc.want) {
			t.Errorf("%v: exit %d, want 2 and %q:\n%s", tc.args, exitCode(err), tc.want, out)
		}
		if strings.Contains(string(out), "hunter22") {
			t.Errorf("%v: the output shows the password:\n%s", tc.args, out)
		}
	}
}
