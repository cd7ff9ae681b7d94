package main

import (
	"encoding/base64"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/dashboards"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/sim"
)

// runPushgateway starts Debian's prometheus-pushgateway on a free port,
// keeping its groups in memory only (Debian's default file is under
// /var/lib), with the flags given; it returns its base URL.
func runPushgateway(t *testing.T, flags ...string) string {
	t.Helper()
	bin := testkit.Tool(t, "prometheus-pushgateway", "apt-get install prometheus-pushgateway")
	addr := freeAddr(t)
	return runServer(t, bin, addr, append([]string{"--web.listen-address=" + addr, "--persistence.file="}, flags...)...)
}

// pushConfig has a fast burst on the sim and a sweep on a sim that serves
// one request at a time (about 8/s): its 2/s step holds a 300 ms TTFT, its
// 20/s step queues far past it, so the sweep has a knee, a capacity and a
// cost.
func pushConfig(t *testing.T, fast, serial string) string {
	return writeTemp(t, "push.yml", fmt.Sprintf(`targets:
  - {name: sim, url: %q}
  - {name: serial, url: %q, timeout: 30s}
scenarios:
  - {name: s, prompt_tokens: 16, output_tokens: 5, slo: {ttft: 1s, target_ratio: 0.9}}
  - {name: tight, prompt_tokens: 16, output_tokens: 5, slo: {ttft: 300ms, target_ratio: 0.5}}
bursts:
  - name: release
    target: sim
    scenarios: [{scenario: s}]
    arrival: {process: poisson, rate: 20}
    requests: 40
    warmup: {requests: 2}
  - name: capacity
    target: serial
    scenarios: [{scenario: tight}]
    arrival: {process: constant, rate: 2}
    duration: 4s
    sweep: {rates: [2, 20]}
    capacity: {target_rate: 100, gpus_per_instance: 2}
    cost: {per_gpu_hour: 2.5}
`, fast, serial))
}

// The release pipeline's view, end to end with real binaries: llmprobe gate
// pushes each run to Debian's Pushgateway, a real Prometheus scrapes it with
// honor_labels and evaluates the rules. A passing run, then a failing one
// of the same burst and target with another release, then a passing one:
// each replaces the group (one series per burst, the newest release's), the
// release gate alert fires on the failure and clears on the next pass, and
// every query of the Bursts dashboard returns the pushed runs. compare
// pushes its candidate's run as a group of its own.
func TestGatePushesToPrometheus(t *testing.T) {
	pushgateway := runPushgateway(t)
	rules, err := filepath.Abs("../../alerts/llmprobe.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	prom := runPrometheus(t, fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [%q]
scrape_configs:
  - job_name: pushgateway
    honor_labels: true
    static_configs: [{targets: [%q]}]
`, rules, strings.TrimPrefix(pushgateway, "http://")))

	fast, _ := simServer(t)
	serial := serveSim(t, func(c *sim.Config) {
		c.MaxBatch, c.MaxQueue = 1, 10000
		c.PrefillBase, c.PrefillPerToken, c.DecodeBase, c.DecodePerSeq = 20*time.Millisecond, 0, 20*time.Millisecond, 0
	})
	slow := serveSim(t, func(c *sim.Config) { c.PrefillBase = 1500 * time.Millisecond })
	cfg, storage := pushConfig(t, fast.URL, serial), t.TempDir()
	gate := func(release string, args ...string) (int, string) {
		t.Helper()
		out, err := exec.Command(binPath, append([]string{"gate", "--config.file=" + cfg, "--storage.path=" + storage,
			"--push.url=" + pushgateway, "--push.release=" + release}, args...)...).CombinedOutput()
		if !strings.Contains(string(out), "pushed to --push.url") {
			t.Fatalf("gate %v of release %s pushed nothing: exit %d\n%s", args, release, exitCode(err), out)
		}
		return exitCode(err), string(out)
	}
	// passedIs waits until Prometheus has exactly one pushed verdict of the
	// release burst, of this release and value: the group was replaced.
	passedIs := func(release string, want float64, alert bool) {
		t.Helper()
		testkit.WaitUntil(t, fmt.Sprintf("release %s's verdict %g in Prometheus", release, want), 30*time.Second, func() bool {
			got, err := promInstant(prom, `llmprobe_burst_passed{job="llmprobe_gate", burst="release", target="sim"}`)
			if err != nil || len(got) != 1 || got[0].Metric["release"] != release || got[0].Value[1] != fmt.Sprint(want) {
				return false
			}
			firing, err := promInstant(prom, `ALERTS{alertname="LLMProbeReleaseGateFailed", alertstate="firing", burst="release"}`)
			return err == nil && (len(firing) == 1) == alert && (!alert || firing[0].Metric["release"] == release)
		})
	}

	if code, out := gate("v1", "--burst=release"); code != 0 {
		t.Fatalf("v1: exit %d, want 0\n%s", code, out)
	}
	passedIs("v1", 1, false)
	if code, out := gate("v2", "--burst=release", "--target.url="+slow); code != 1 {
		t.Fatalf("v2 against a sim slower than the objective: exit %d, want 1\n%s", code, out)
	}
	passedIs("v2", 0, true)
	if code, out := gate("v3", "--burst=release"); code != 0 {
		t.Fatalf("v3: exit %d, want 0\n%s", code, out)
	}
	passedIs("v3", 1, false)
	gate("v3", "--burst=capacity") // its verdict is the sweep's; its figures are what counts here

	out, err := exec.Command(binPath, "compare", "--config.file="+cfg, "--burst=release", "--push.url="+pushgateway, "--push.release=v3").CombinedOutput()
	if !strings.Contains(string(out), `pushed to --push.url as {job="llmprobe_compare", burst="release", target="sim"}`) {
		t.Fatalf("compare pushed nothing: exit %d\n%s", exitCode(err), out)
	}
	// compare's pushed verdict is its exit code's: 0 passed.
	want := map[bool]string{true: "1", false: "0"}[exitCode(err) == 0]
	testkit.WaitUntil(t, "compare's push in Prometheus", 30*time.Second, func() bool {
		got, _ := promInstant(prom, `llmprobe_burst_passed{job="llmprobe_compare", burst="release", target="sim", release="v3"}`)
		return len(got) == 1 && got[0].Value[1] == want
	})

	queries, err := dashboards.Queries()
	if err != nil {
		t.Fatal(err)
	}
	var panels []string
	for _, name := range slices.Sorted(maps.Keys(queries)) {
		if strings.HasPrefix(name, "llmprobe / Bursts / ") {
			panels = append(panels, name)
		}
	}
	var empty []string
	testkit.WaitUntil(t, "every Bursts panel's data", 30*time.Second, func() bool {
		empty = empty[:0]
		for _, name := range panels {
			expr := dashboards.Concrete(queries[name], "10s")
			if series, err := promSeries(prom, expr); err != nil || len(series) == 0 {
				empty = append(empty, fmt.Sprintf("%s: %v\n  %s", name, err, expr))
			}
		}
		return len(empty) == 0
	})
	// One group per job, burst and target: no run piled up beside another.
	groups, err := promInstant(prom, `count by (job, burst, target) (llmprobe_burst_passed)`)
	if err != nil || len(groups) != 3 {
		t.Errorf("pushed groups: %v %v, want release and capacity of llmprobe_gate and release of llmprobe_compare", groups, err)
	}
	for _, g := range groups {
		if g.Value[1] != "1" {
			t.Errorf("group %v holds %v verdicts, want 1", g.Metric, g.Value[1])
		}
	}
	t.Logf("%d Bursts panels answered by the pushed runs; %d groups", len(panels), len(groups))
}

// A push that fails is a warning on stderr that names no credential, and
// the exit code stays the verdict's; a URL with credentials is refused
// before anything is sent.
func TestGatePushFailure(t *testing.T) {
	const user, password = "ci", "push-password-7"
	// A gateway behind a proxy that refuses the push and echoes the
	// request's Authorization header back.
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "refused: "+r.Header.Get("Authorization"), http.StatusForbidden)
	}))
	t.Cleanup(echo.Close)
	srv, _ := simServer(t)
	cfg := gateConfig(t, srv.URL, "2s")
	secret := writeTemp(t, "password", password)
	httpCfg := writeTemp(t, "push-http.yml", fmt.Sprintf("basic_auth: {username: %s, password_file: %s}\n", user, secret))

	out, err := exec.Command(binPath, "gate", "--config.file="+cfg, "--burst=release", "--storage.path=",
		"--push.url="+echo.URL, "--push.http-config.file="+httpCfg).CombinedOutput()
	if exitCode(err) != 0 || !strings.Contains(string(out), "WARNING: the run was not pushed to --push.url (the exit code is the verdict's)") || !strings.Contains(string(out), "403") {
		t.Errorf("a refused push of a passing gate: exit %d, want 0 and the warning with the status\n%s", exitCode(err), out)
	}
	encoded := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	if strings.Contains(string(out), password) || strings.Contains(string(out), encoded) {
		t.Errorf("the output shows the push's credentials:\n%s", out)
	}
	if !strings.Contains(string(out), "refused: Basic <secret>") {
		t.Errorf("the gateway's answer is not quoted masked:\n%s", out)
	}

	out, err = exec.Command(binPath, "gate", "--config.file="+cfg, "--burst=release", "--storage.path=",
		"--push.url=http://"+user+":"+password+"@"+strings.TrimPrefix(echo.URL, "http://")).CombinedOutput()
	if exitCode(err) != 2 || !strings.Contains(string(out), "--push.url holds credentials") || strings.Contains(string(out), password) {
		t.Errorf("credentials in --push.url: exit %d, want 2 and an error without the password\n%s", exitCode(err), out)
	}
	if strings.Contains(string(out), "preflight") {
		t.Errorf("the gate sent requests before refusing its flags:\n%s", out)
	}
}
