package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/llmprobe/llmprobe/dashboards"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/report"
)

// gpuOnly are the panels that can only have data where llmprobe runs on a
// GPU node with NVML; everything else must return data.
var gpuOnly = map[string]string{
	"llmprobe / GPU / Utilization / 0":             "NVML: no GPU on this machine",
	"llmprobe / GPU / Memory used / 0":             "NVML: no GPU on this machine",
	"llmprobe / GPU / Memory used / 1":             "NVML: no GPU on this machine",
	"llmprobe / GPU / Power / 0":                   "NVML: no GPU on this machine",
	"llmprobe / GPU / Power / 1":                   "NVML: no GPU on this machine",
	"llmprobe / GPU / Temperature / 0":             "NVML: no GPU on this machine",
	"llmprobe / GPU / Clocks / 0":                  "NVML: no GPU on this machine",
	"llmprobe / GPU / Throttle reasons / 0":        "NVML: no GPU on this machine",
	"llmprobe / GPU / Energy per output token / 0": "a burst's energy needs NVML on the node",
	"llmprobe / GPU / XID and ECC errors / 0":      "NVML: no GPU on this machine",
	"llmprobe / GPU / XID and ECC errors / 1":      "NVML: no GPU on this machine",
}

func promQuery(t *testing.T, base, expr string) (int, error) {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/query?" + url.Values{"query": {expr}}.Encode())
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, err
	}
	if body.Status != "success" {
		return 0, fmt.Errorf("%s", body.Error)
	}
	return len(body.Data.Result), nil
}

// End to end: the sim, llmprobe with a fast canary and a short burst, and a
// real Prometheus scraping both every second with the rules loaded; then every
// dashboard query and every recording rule must return data.
func TestDashboardsAndRulesAgainstPrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prometheus")
	}
	promBin := testkit.Tool(t, "prometheus", "apt-get install prometheus")
	start := time.Now()
	srv, _ := simServer(t)
	storage := t.TempDir()
	// A stored earlier run, so the burst has a regression verdict to export.
	// A baseline of the same target, model and scenario mix.
	previous := &report.Report{ID: "e2e-20200101T000000Z", Burst: "e2e", Target: "sim", Model: "sim-model",
		Config:  map[string]any{"scenarios": []any{map[string]any{"scenario": "chat", "weight": 1}}},
		Latency: map[string]report.Summary{"ttft": {Count: 1, P50: 0.1, P99: 0.1}}}
	if err := report.NewStore(storage, nil).Save(previous, 5); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(t.TempDir(), "llmprobe.yml")
	cfg := fmt.Sprintf(`targets: [{name: sim, url: %q, timeout: 10s}]
scenarios:
  - name: chat
    prompt_tokens: 32
    output_tokens: 8
    slo: {ttft: 1s, tpot: 200ms, e2e: 5s, stall: 1s, target_ratio: 0.99}
    quality: {contains: " "}
canary: {interval: 300ms}
bursts:
  - name: e2e
    target: sim
    scenarios: [{scenario: chat}]
    arrival: {rate: 5}
    duration: 3s
    schedule: {on_start: true}
    sweep: {rates: [5]}
`, srv.URL)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, "--config.file="+cfgPath, "--storage.path="+storage)

	rules, err := filepath.Abs("../../alerts/llmprobe.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	promAddr := freeAddr(t)
	promCfg := fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [%q]
scrape_configs:
  - job_name: llmprobe
    static_configs: [{targets: [%q]}]
  - job_name: sim
    static_configs: [{targets: [%q]}]
`, rules, strings.TrimPrefix(d.base, "http://"), strings.TrimPrefix(srv.URL, "http://"))
	promDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(promDir, "prometheus.yml"), []byte(promCfg), 0o600); err != nil {
		t.Fatal(err)
	}
	prom := exec.Command(promBin, "--config.file="+filepath.Join(promDir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(promDir, "data"), "--web.listen-address="+promAddr)
	var promLog strings.Builder
	prom.Stdout, prom.Stderr = &promLog, &promLog
	if err := prom.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = prom.Process.Signal(syscall.SIGTERM)
		_ = prom.Wait()
		if t.Failed() {
			t.Logf("prometheus log:\n%s", promLog.String())
		}
	})
	base := "http://" + promAddr

	// Wait until the burst has reported and a few rule evaluations happened.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		n1, _ := promQuery(t, base, `llmprobe_burst_regression_ratio`)
		n2, _ := promQuery(t, base, `llmprobe:slo_burn_rate:rate5m{traffic="burst"}`)
		n3, _ := promQuery(t, base, `rate(llmprobe_time_to_first_token_seconds_count{traffic="canary"}[10s]) > 0`)
		if n1 > 0 && n2 > 0 && n3 > 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("Prometheus never saw the burst and the canaries (regression %d, burn %d, rate %d)", n1, n2, n3)
		case <-time.After(500 * time.Millisecond):
		}
	}

	queries, err := dashboards.Queries()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for name := range queries {
		names = append(names, name)
	}
	sort.Strings(names)
	// Scrapes and rule evaluations arrive every second: poll until every query
	// has data, or the deadline.
	var withData, gpu, empty []string
	for {
		withData, gpu, empty = withData[:0], gpu[:0], empty[:0]
		for _, name := range names {
			n, err := promQuery(t, base, dashboards.Concrete(queries[name], "10s"))
			if err != nil {
				t.Fatalf("%s: %v\n  %s", name, err, queries[name])
			}
			switch _, gpuPanel := gpuOnly[name]; {
			case gpuPanel && n == 0:
				gpu = append(gpu, name+" ("+gpuOnly[name]+")")
			case n == 0:
				empty = append(empty, name+":\n  "+dashboards.Concrete(queries[name], "10s"))
			case !gpuPanel:
				withData = append(withData, name)
			}
		}
		if len(empty) == 0 || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Second)
	}
	for _, e := range empty {
		t.Errorf("no data: %s", e)
	}

	var file struct {
		Groups []struct {
			Rules []struct {
				Record string `yaml:"record"`
				Expr   string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	b, err := os.ReadFile(rules)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	recorded := 0
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			if r.Record == "" {
				continue
			}
			recorded++
			if n, err := promQuery(t, base, r.Expr); err != nil || n == 0 {
				t.Errorf("recording rule %s: %d series, %v", r.Record, n, err)
			}
			if n, _ := promQuery(t, base, r.Record); n == 0 {
				t.Errorf("recorded series %s is empty in Prometheus", r.Record)
			}
		}
	}
	t.Logf("%d panel queries returned data, %d recording rules checked, in %s; empty for lack of a GPU: %s",
		len(withData), recorded, time.Since(start).Round(time.Second), strings.Join(gpu, "; "))
}
