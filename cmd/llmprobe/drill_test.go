package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/dashboards"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/store"
)

// The engine-upgrade drill, end to end: a real llmprobe probes a sim (the
// `llmprobe sim` binary), a real Prometheus scrapes it with the project's
// rules and sends to a real Alertmanager. The sim restarts on the same
// address reporting version 0.2.0, once 50 % slower at decoding and once
// as fast as before. The upgrade burst must run and judge the change; the
// slow case must reach Alertmanager and the Engine upgrades dashboard's
// regression query, the other must fire nothing.
func TestUpgradeDrill(t *testing.T) {
	for _, c := range []struct {
		name     string
		slowdown float64
	}{{"50 % slower decode fires", 1.5}, {"the same speed fires nothing", 1}} {
		t.Run(c.name, func(t *testing.T) { upgradeDrill(t, c.slowdown) })
	}
}

// The sim's decode step times before the upgrade: long enough that a few
// milliseconds of CPU contention on a shared CI machine (a late timer in
// the sim, a late read in llmprobe) stay a small part of every token gap.
const (
	drillDecodeBase   = 40 * time.Millisecond
	drillDecodePerSeq = 50 * time.Microsecond
)

// simProc is `llmprobe sim` on a fixed address.
type simProc struct {
	cmd *exec.Cmd
	out strings.Builder
}

// startSim runs `llmprobe sim` on addr with version v and decode times
// scaled by slowdown, and waits until it answers. Prefill is cheap, so
// decode steps make up TPOT and the slowdown shows there.
func startSim(t *testing.T, addr, v string, slowdown float64) *simProc {
	t.Helper()
	return startSimPrefill(t, addr, v, slowdown, 2*time.Millisecond)
}

// startSimPrefill is startSim with a prefill of its own, the same for
// every slowdown.
func startSimPrefill(t *testing.T, addr, v string, slowdown float64, prefill time.Duration) *simProc {
	t.Helper()
	scale := func(d time.Duration) string { return time.Duration(float64(d) * slowdown).String() }
	p := &simProc{cmd: exec.Command(binPath, "sim", "--sim.listen-address="+addr, "--sim.version="+v, "--sim.model=drill-model",
		"--sim.prefill-base="+prefill.String(), "--sim.prefill-per-token=0s", "--sim.max-batch=128",
		"--sim.decode-base="+scale(drillDecodeBase), "--sim.decode-per-seq="+scale(drillDecodePerSeq))}
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.stop)
	testkit.WaitUntil(t, "the sim "+v+" answers /version", 20*time.Second, func() bool {
		code, body := testkit.Get("http://" + addr + "/version")
		return code == http.StatusOK && strings.Contains(body, v)
	})
	return p
}

func (p *simProc) stop() {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	_ = p.cmd.Wait()
}

// runAlertmanager starts Alertmanager with one receiver that sends nowhere
// and returns its base URL.
func runAlertmanager(t *testing.T) string {
	t.Helper()
	bin := testkit.Tool(t, "prometheus-alertmanager", "apt-get install prometheus-alertmanager")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(cfg, []byte("route: {receiver: drill}\nreceivers: [{name: drill}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	cmd := exec.Command(bin, "--config.file="+cfg, "--storage.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr, "--cluster.listen-address=")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("alertmanager log:\n%s", out.String())
		}
	})
	base := "http://" + addr
	testkit.WaitUntil(t, "Alertmanager ready", 30*time.Second, func() bool {
		code, _ := testkit.Get(base + "/-/ready")
		return code == http.StatusOK
	})
	return base
}

// amAlerts lists the alerts Alertmanager holds with the given name.
func amAlerts(t *testing.T, base, name string) []map[string]string {
	t.Helper()
	code, body := testkit.Get(base + "/api/v2/alerts")
	if code != http.StatusOK {
		t.Fatalf("GET /api/v2/alerts: %d %s", code, body)
	}
	var alerts []struct {
		Labels map[string]string `json:"labels"`
	}
	if err := json.Unmarshal([]byte(body), &alerts); err != nil {
		t.Fatalf("GET /api/v2/alerts: %v: %s", err, body)
	}
	var out []map[string]string
	for _, a := range alerts {
		if a.Labels["alertname"] == name {
			out = append(out, a.Labels)
		}
	}
	return out
}

// ruleState is the state and last evaluation of the named alerting rule.
func ruleState(t *testing.T, base, name string) (state string, last time.Time) {
	t.Helper()
	code, body := testkit.Get(base + "/api/v1/rules?type=alert")
	if code != http.StatusOK {
		t.Fatalf("GET /api/v1/rules: %d %s", code, body)
	}
	var rules struct {
		Data struct {
			Groups []struct {
				Rules []struct {
					Name           string    `json:"name"`
					State          string    `json:"state"`
					LastEvaluation time.Time `json:"lastEvaluation"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &rules); err != nil {
		t.Fatal(err)
	}
	for _, g := range rules.Data.Groups {
		for _, r := range g.Rules {
			if r.Name == name {
				return r.State, r.LastEvaluation
			}
		}
	}
	t.Fatalf("Prometheus has no rule %s", name)
	return "", time.Time{}
}

const drillBurst = "drill-upgrade"

func upgradeDrill(t *testing.T, slowdown float64) {
	start := time.Now()
	simAddr := freeAddr(t)
	sim := startSim(t, simAddr, "0.1.0", 1)
	am := runAlertmanager(t)

	storage := t.TempDir()
	// 60 requests a side, Poisson at 20/s (seeded: both runs send the same
	// arrivals, at random phases of the sim's steps; constant arrivals beat
	// against a step of nearly their period and skew TTFT), 32 tokens each
	// (some 1.3 s of decoding, about 26 in flight). One run a side and a
	// burst with too few stored runs: the verdict assumes a 5 % spread
	// between runs, which puts about ±15 % around the TPOT median's
	// change. A 50 % slower decode lies beyond +15 % by far; the same
	// engine cannot show itself within it, so it has not enough evidence
	// and fires nothing either way.
	cfg := fmt.Sprintf(`targets:
  - {name: sim, url: "http://%s", timeout: 10s, info_interval: 1s}
scenarios:
  - name: chat
    prompt_tokens: 32
    output_tokens: 32
canary: {interval: 2s}
bursts:
  - name: %s
    target: sim
    scenarios: [{scenario: chat}]
    arrival: {process: poisson, rate: 20}
    requests: 60
    warmup: {requests: 6}
    schedule: {on_start: true, on_engine_change: {settle: 1s, max_increase: 0.15}}
`, simAddr, drillBurst)
	cfgPath := testkit.ConfigFile(t, cfg)
	d := startDaemon(t, "--config.file="+cfgPath, "--storage.path="+storage)

	rules, err := filepath.Abs("../../alerts/llmprobe.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	prom := runPrometheus(t, fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [%q]
alerting:
  alertmanagers:
    - static_configs: [{targets: [%q]}]
scrape_configs:
  - job_name: llmprobe
    static_configs: [{targets: [%q]}]
`, rules, strings.TrimPrefix(am, "http://"), strings.TrimPrefix(d.base, "http://")))

	store := store.New(storage, nil)
	testkit.WaitUntil(t, "the on_start run's report", 30*time.Second, func() bool {
		r, _ := store.Latest(drillBurst)
		return r != nil
	})
	before, _ := store.Latest(drillBurst)
	if before.Upgrade != nil || before.EngineVersion != "0.1.0" {
		t.Fatalf("the on_start run: version %q, upgrade %+v", before.EngineVersion, before.Upgrade)
	}

	// The upgrade: the engine stops and a new one starts on the same address.
	upgraded := time.Now()
	sim.stop()
	startSim(t, simAddr, "0.2.0", slowdown)

	var after *report.Report
	testkit.WaitUntil(t, "the upgrade run's report", 40*time.Second, func() bool {
		after, _ = store.LatestUpgrade(drillBurst)
		return after != nil
	})
	u := after.Upgrade
	t.Logf("upgrade run %s, %s after the restart: %s", after.ID, time.Since(upgraded).Round(100*time.Millisecond), u.Summary)
	if u.From.Version != "0.1.0" || u.To.Version != "0.2.0" || u.BaselineID != before.ID {
		t.Fatalf("upgrade run from %s to %s against %q, want 0.1.0 → 0.2.0 against %s", u.From, u.To, u.BaselineID, before.ID)
	}
	if !strings.HasPrefix(u.Summary, "engine llmprobe-sim 0.1.0 → 0.2.0: ") {
		t.Errorf("summary %q does not state the change", u.Summary)
	}
	slow := slowdown > 1
	if u.Regressed != slow {
		t.Fatalf("regressed = %v with decode ×%g: %s", u.Regressed, slowdown, u.Summary)
	}
	if slow && !strings.Contains(u.Summary, "regression: ") || !slow && strings.Contains(u.Summary, "regression: ") {
		t.Errorf("summary %q", u.Summary)
	}
	// The decode slowdown moves every request's TPOT, so its median must
	// regress; a p99 of 60 samples is too few to be judged.
	for _, c := range u.Changes {
		if c.Metric == "tpot" && c.Quantile == "p50" && slow && !c.Regression {
			t.Errorf("%s %s: change %s (interval %s … %s): not a regression", c.Metric, c.Quantile, fmtPtr(c.Change), fmtPtr(c.AtLeast), fmtPtr(c.AtMost))
		}
		if c.Quantile == "p99" && c.Regression {
			t.Errorf("%s p99 of 60 samples judged a regression", c.Metric)
		}
	}

	queries, err := dashboards.Queries()
	if err != nil {
		t.Fatal(err)
	}
	panel := "llmprobe / Engine upgrades / Upgrade regression / 0"
	expr, ok := queries[panel]
	if !ok {
		t.Fatalf("no dashboard query %q", panel)
	}
	expr = dashboards.Concrete(expr, "10s")
	// The verdict as the dashboard shows it: every quantile, labelled 0.1.0 → 0.2.0.
	var verdict []promSample
	testkit.WaitUntil(t, "the dashboard's regression query to return the upgrade run", 20*time.Second, func() bool {
		verdict, _ = promInstant(prom, expr)
		for _, s := range verdict {
			if s.Metric["to_version"] != "0.2.0" {
				return false
			}
		}
		return len(verdict) == len(u.Changes)
	})
	regressed := 0
	for _, s := range verdict {
		if s.Metric["from_version"] != "0.1.0" || s.Metric["burst"] != drillBurst {
			t.Errorf("dashboard series %v", s.Metric)
		}
		if s.Value[1] == "1" {
			regressed++
		}
	}

	const alert = "LLMProbeUpgradeRegression"
	if slow {
		if regressed == 0 {
			t.Errorf("the dashboard's regression query shows no regression: %v", verdict)
		}
		var got []map[string]string
		testkit.WaitUntil(t, alert+" in Alertmanager", 30*time.Second, func() bool {
			got = amAlerts(t, am, alert)
			return len(got) > 0
		})
		for _, a := range got {
			if a["burst"] != drillBurst || a["target"] != "sim" || a["from_version"] != "0.1.0" || a["to_version"] != "0.2.0" || !strings.HasPrefix(a["metric"], "tpot_") && !strings.HasPrefix(a["metric"], "ttft_") {
				t.Errorf("alert labels %v", a)
			}
		}
		t.Logf("%s reached Alertmanager for %d quantiles, %s after the restart; the drill took %s", alert, len(got), time.Since(upgraded).Round(100*time.Millisecond), time.Since(start).Round(100*time.Millisecond))
		return
	}
	if regressed != 0 {
		t.Errorf("the dashboard's regression query shows a regression with the same speed: %v", verdict)
	}
	// The rule has seen the verdict once it evaluated after Prometheus had
	// the verdict (the query above): two evaluations later, to be sure.
	seen := time.Now()
	testkit.WaitUntil(t, alert+" evaluated twice after the verdict was in Prometheus", 20*time.Second, func() bool {
		_, last := ruleState(t, prom, alert)
		return last.After(seen.Add(time.Second))
	})
	if state, _ := ruleState(t, prom, alert); state != "inactive" {
		t.Errorf("%s is %s with no regression", alert, state)
	}
	if got := amAlerts(t, am, alert); len(got) > 0 {
		t.Errorf("%s reached Alertmanager with no regression: %v", alert, got)
	}
	t.Logf("no alert, the rule evaluated after the verdict; the drill took %s", time.Since(start).Round(100*time.Millisecond))
}

func fmtPtr(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.3g", *v)
}
