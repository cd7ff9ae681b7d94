package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/sim"
)

// quotaCgroup makes a cgroup with 5 % of one CPU (5 ms each 100 ms
// period) and gives its cgroup.procs file; it is removed once the test's
// processes in it have ended. cgroup v1's cpu controller, else a v2
// hierarchy that enables cpu: no other may be left to fail quietly.
func quotaCgroup(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("llmprobe-test-%d", os.Getpid())
	var dir string
	var limits map[string]string
	switch {
	case writable("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"):
		dir = filepath.Join("/sys/fs/cgroup/cpu", name)
		limits = map[string]string{"cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "5000"}
	case writable("/sys/fs/cgroup/cgroup.subtree_control"):
		if err := os.WriteFile("/sys/fs/cgroup/cgroup.subtree_control", []byte("+cpu"), 0); err != nil {
			t.Fatalf("cgroup v2 at /sys/fs/cgroup: enabling the cpu controller: %v", err)
		}
		dir = filepath.Join("/sys/fs/cgroup", name)
		limits = map[string]string{"cpu.max": "5000 100000"}
	default:
		t.Fatal("the live throttling test needs a CPU quota it can set: cgroup v1's cpu controller at /sys/fs/cgroup/cpu or a cgroup v2 hierarchy at /sys/fs/cgroup, writable (as root)")
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := syscall.Rmdir(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Errorf("removing %s: %v", dir, err)
		}
	})
	for file, value := range limits {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0); err != nil {
			t.Fatalf("%s: %v", filepath.Join(dir, file), err)
		}
	}
	return filepath.Join(dir, "cgroup.procs")
}

func writable(path string) bool {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// A gate run in a cgroup whose CPU quota it outgrows, against a sim
// outside it, reports how long it was throttled, says so in its verdict,
// and counts the pauses in its requests' own delays.
func TestGateThrottledByItsQuota(t *testing.T) {
	procs := quotaCgroup(t)
	// 200 tokens a request at 1 ms each, 100 requests a second: reading
	// 20,000 chunks a second needs far more than 5 % of a CPU.
	url := serveSim(t, func(c *sim.Config) {
		c.Model, c.PrefillBase, c.PrefillPerToken, c.DecodeBase, c.DecodePerSeq, c.MaxBatch = "m", 20*time.Millisecond, 0, time.Millisecond, 0, 256
	})
	config := writeTemp(t, "gate.yml", fmt.Sprintf(`targets: [{name: sim, url: %q}]
scenarios:
  - {name: s, prompt_tokens: 16, output_tokens: 200, slo: {ttft: 60s, target_ratio: 0.9}}
bursts:
  - name: throttled
    target: sim
    scenarios: [{scenario: s}]
    arrival: {process: constant, rate: 100}
    requests: 200
    warmup: {requests: 2}
`, url))
	output := filepath.Join(t.TempDir(), "report.json")
	gate := fmt.Sprintf("echo $$ > %s && exec %s gate --config.file=%s --burst=throttled --output=%s --storage.path=", procs, binPath, config, output)
	out, err := exec.Command("sh", "-c", gate).CombinedOutput()
	if err != nil {
		t.Fatalf("llmprobe gate: %v\n%s", err, out)
	}
	b, err := os.ReadFile(output)
	if err != nil {
		t.Fatal(err)
	}
	var rep report.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	throttled := report.Throttled(&rep)
	if throttled == nil || throttled.Seconds <= 0 || throttled.Periods == 0 {
		t.Fatalf("the report's throttling is %+v, want some under a 5%% quota\n%s", throttled, out)
	}
	t.Logf("throttled %.3fs in %d periods over a %.1fs run", throttled.Seconds, throttled.Periods, rep.DurationSeconds)
	if throttled.Seconds > rep.End.Sub(rep.Start).Seconds()+1 {
		t.Errorf("throttled %.3fs in a %.1fs run: more than its wall-clock time", throttled.Seconds, rep.DurationSeconds)
	}
	want := fmt.Sprintf("llmprobe was throttled for %.1fms during the run (its CPU quota, in %d periods)", 1000*throttled.Seconds, throttled.Periods)
	if !strings.Contains(string(out), want) || !strings.Contains(rep.VerdictReason, want) {
		t.Errorf("neither the gate's output nor its verdict %q says %q\n%s", rep.VerdictReason, want, out)
	}
	// The requests' own delays carry the pauses: without them TTFT is
	// faster.
	fast, ok := rep.WithoutOwnDelay["ttft"]["p50"]
	if slow := rep.Latency["ttft"].P50; !ok || fast >= slow {
		t.Errorf("ttft p50 %gs as measured, %gs without llmprobe's own delay (%v): the throttling is not in it", slow, fast, ok)
	}
}
