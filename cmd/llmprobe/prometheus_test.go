package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/llmprobe/llmprobe/dashboards"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/store"
	"github.com/llmprobe/llmprobe/sim"
	"github.com/llmprobe/llmprobe/stats"
)

// promSample is one series of an instant query's result.
type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// promInstant runs an instant query.
func promInstant(base, expr string) ([]promSample, error) {
	resp, err := http.Get(base + "/api/v1/query?" + url.Values{"query": {expr}}.Encode())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []promSample `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("%s", body.Error)
	}
	return body.Data.Result, nil
}

// promSeries runs an instant query and returns each result's labels.
func promSeries(base, expr string) ([]map[string]string, error) {
	samples, err := promInstant(base, expr)
	out := make([]map[string]string, len(samples))
	for i, r := range samples {
		out[i] = r.Metric
	}
	return out, err
}

func promQuery(t *testing.T, base, expr string) (int, error) {
	t.Helper()
	series, err := promSeries(base, expr)
	return len(series), err
}

// familyTargets are the llmprobe targets each engine row of the Engines
// dashboard may show: the sim poses as each family, and the plain sim
// (vLLM's metric names, engine "llmprobe-sim") belongs to the vLLM row.
var familyTargets = map[string][]string{
	"vLLM": {"sim", sim.EngineVLLM}, "SGLang": {sim.EngineSGLang}, "TGI": {sim.EngineTGI}, "llama.cpp": {sim.EngineLlamaCPP},
}

// familySim runs the sim posing as an engine family.
func familySim(t *testing.T, engine string) *httptest.Server {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Engine, cfg.Version = engine, "1.0.0"
	cfg.DecodeBase /= 5
	// A draft model and disaggregated prefill where the family reports
	// them, for the speculative-decoding and KV-transfer panels.
	if engine != sim.EngineTGI {
		cfg.SpecDecode.DraftTokens, cfg.SpecDecode.Acceptance = 3, 0.7
	}
	if engine == sim.EngineVLLM || engine == sim.EngineSGLang {
		cfg.KVTransfer = time.Millisecond
	}
	e, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e.Handler())
	t.Cleanup(func() { srv.Close(); e.Close() })
	return srv
}

// End to end: the sim once plainly and once posing as each engine family,
// the GPU collector over NVML's mock, llmprobe with a fast canary per target
// and a short burst, and a real Prometheus scraping them all every second with
// the rules loaded; then every dashboard query and every recording rule must
// return data, and every engine row only its family's targets.
func TestDashboardsAndRulesAgainstPrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prometheus")
	}
	start := time.Now()
	gpuAddr := mockGPUExporter(t)
	srv, _ := simServer(t)
	engines := map[string]*httptest.Server{"sim": srv}
	for _, engine := range sim.Engines {
		engines[engine] = familySim(t, engine)
	}
	storage := t.TempDir()
	store := store.New(storage, nil)
	// The energy per token gauge comes only from a burst run where llmprobe
	// reads the node's GPUs: this binary has no NVML, so a stored report of
	// such a run (a burst without a schedule) brings it back at start.
	onGPUNode := &report.Report{ID: "gpu-node-20200101T000000Z", Burst: "gpu-node", Target: "sim", Model: "sim-model",
		Latency: map[string]stats.Summary{"ttft": {Count: 1, P50: 0.1, P99: 0.1}},
		GPU:     &report.GPUFacts{Count: 8, JoulesPerOutputToken: ptrTo(0.42)}}
	// The last upgrade run of a burst with on_engine_change comes back at
	// start too, for the Engine upgrades dashboard's verdict panels.
	change := 0.31
	upgraded := &report.Report{ID: "upgrade-20200101T000000Z", Burst: "upgrade", Target: "sim", Model: "sim-model",
		Latency: map[string]stats.Summary{"ttft": {Count: 1, P50: 0.1, P99: 0.1}},
		Upgrade: &report.Upgrade{From: report.Facts{Engine: "llmprobe-sim", Version: "0.0.9", Model: "sim-model"}, To: report.Facts{Engine: "llmprobe-sim", Version: "0.1.0", Model: "sim-model"},
			BaselineID: "upgrade-20191231T000000Z", MaxIncrease: 0.1,
			Changes: []report.UpgradeChange{{Metric: "tpot", Quantile: "p99", Change: &change, AtLeast: &change, Significant: true, Regression: true}}}}
	// A sweep that found its knee and sized and priced the fleet comes
	// back at start too (a 3 s step's goodput bound cannot reach 0.99), for
	// the sweep row.
	swept := sweptReport()
	var targets, engineJobs strings.Builder
	for _, name := range slices.Sorted(maps.Keys(engines)) {
		addr := strings.TrimPrefix(engines[name].URL, "http://")
		fmt.Fprintf(&targets, "  - {name: %s, url: %q, timeout: 10s}\n", name, engines[name].URL)
		// The convention of docs/dashboards.md: the engine's job labels its
		// series with llmprobe's name of the target.
		fmt.Fprintf(&engineJobs, "  - job_name: engine-%s\n    static_configs: [{targets: [%q], labels: {target: %s}}]\n", name, addr, name)
	}
	cfg := fmt.Sprintf(`targets:
%sscenarios:
  - name: chat
    prompt_tokens: 32
    output_tokens: 8
    slo: {ttft: 1s, tpot: 200ms, e2e: 5s, stall: 1s, target_ratio: 0.99, quality_ratio: 0.9}
    quality: {contains: " "}
  - name: session
    prompt_tokens: 32
    output_tokens: 8
    conversation: {turns: 2}
  - {name: agent, prompt_tokens: 16, output_tokens: 32, %s, tool_choice: required}
canary:
  interval: 300ms
  probes:
    - {scenarios: [chat]}
    - {scenarios: [session, agent], targets: [sim]}
bursts:
  - name: e2e
    target: sim
    scenarios: [{scenario: chat}]
    arrival: {rate: 5}
    duration: 3s
    schedule: {on_start: true}
    sweep: {rates: [5]}
  - name: gpu-node
    target: sim
    scenarios: [{scenario: chat}]
    arrival: {rate: 1}
    duration: 2s
  - name: upgrade
    target: sim
    scenarios: [{scenario: chat}]
    arrival: {rate: 1}
    duration: 2s
    schedule: {on_engine_change: {settle: 1h}}
  - name: swept
    target: sim
    scenarios: [{scenario: chat}]
    duration: 2s
    sweep: {rates: [1, 2]}
    capacity: {target_rate: 100, gpus_per_instance: 2}
    cost: {per_gpu_hour: 2.5}
comparisons:
  - {name: family, baseline: sim, candidate: %s, scenarios: [chat], window: 20s}
`, targets.String(), testkit.WeatherTool, sim.EngineVLLM)
	cfgPath := testkit.ConfigFile(t, cfg)
	// A stored earlier run of the same request set (a baseline must be
	// comparable), so the burst has a regression verdict to export.
	loaded, err := plan.Parse([]byte(cfg), cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	e2e, _ := loaded.Burst("e2e")
	planned := 0
	for a := range e2e.Arrivals(5) {
		if !a.Warmup {
			planned++
		}
	}
	previous := report.Build(e2e.Burst, report.Run{ID: "e2e-20200101T000000Z", Rate: 5, Planned: planned, Start: start.Add(-time.Hour)},
		report.Meta{Model: "sim-model", Scenarios: e2e.ScenarioConfigs()})
	previous.Latency = map[string]stats.Summary{"ttft": {Count: 1, P50: 0.1, P99: 0.1}}
	for _, r := range []*report.Report{previous, onGPUNode, upgraded, swept} {
		if err := store.Save(r, 5); err != nil {
			t.Fatal(err)
		}
	}
	d := startDaemon(t, "--config.file="+cfgPath, "--storage.path="+storage)

	rules, err := filepath.Abs("../../alerts/llmprobe.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	promCfg := fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [%q]
scrape_configs:
  - job_name: llmprobe
    static_configs: [{targets: [%q]}]
  - job_name: gpu
    static_configs: [{targets: [%q]}]
%s`, rules, strings.TrimPrefix(d.base, "http://"), gpuAddr, engineJobs.String())
	base := runPrometheus(t, promCfg)

	// Wait until the burst has reported and a few rule evaluations happened.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
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
			why := "no report of burst e2e"
			if rep, err := store.Latest("e2e"); err == nil && rep != nil {
				why = "the burst's regression: " + rep.RegressionSkipped
			}
			t.Fatalf("Prometheus never saw the burst and the canaries (regression %d, burn %d, rate %d); %s", n1, n2, n3, why)
		case <-time.After(500 * time.Millisecond):
		}
	}

	queries, err := dashboards.Queries()
	if err != nil {
		t.Fatal(err)
	}
	names := slices.Sorted(maps.Keys(queries))
	// Scrapes and rule evaluations arrive every second: poll until every query
	// has data, or the deadline.
	var empty, strays []string
	for {
		empty, strays = empty[:0], strays[:0]
		for _, name := range names {
			expr := dashboards.Concrete(queries[name], "10s")
			series, err := promSeries(base, expr)
			if err != nil {
				t.Fatalf("%s: %v\n  %s", name, err, queries[name])
			}
			if len(series) == 0 {
				empty = append(empty, name+":\n  "+expr)
			}
			strays = append(strays, foreignTargets(name, series)...)
		}
		if (len(empty) == 0 && len(strays) == 0) || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Second)
	}
	for _, e := range empty {
		t.Errorf("no data: %s", e)
	}
	for _, s := range strays {
		t.Errorf("engine row shows another family's target: %s", s)
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
	if t.Failed() {
		return
	}
	t.Logf("all %d panel queries returned data (GPU panels from NVML's mock, engine rows from the sim as %s), %d recording rules checked, in %s",
		len(names), strings.Join(sim.Engines, ", "), recorded, time.Since(start).Round(time.Second))
}

// foreignTargets names the series of an Engines dashboard row's query whose
// target is not of that row's family.
func foreignTargets(query string, series []map[string]string) []string {
	panel, ok := strings.CutPrefix(query, "llmprobe / Engines / ")
	if !ok {
		return nil
	}
	family, _, _ := strings.Cut(panel, " ")
	allowed, ok := familyTargets[family]
	if !ok {
		return nil
	}
	var out []string
	for _, s := range series {
		if !slices.Contains(allowed, s["target"]) {
			out = append(out, fmt.Sprintf("%s: target %q", query, s["target"]))
		}
	}
	return out
}

func ptrTo[T any](v T) *T { return &v }
