package daemon

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/store"
	"github.com/llmprobe/llmprobe/sim"
	"github.com/llmprobe/llmprobe/stats"
)

var descRe = regexp.MustCompile(`fqName: "([^"]+)".*variableLabels: \{([^}]*)\}`)

// registered is what the daemon exports of one metric.
type registered struct {
	Type   string // "" when only its descriptor is known
	Labels []string
}

// The metric contract: every exported llmprobe_ metric is in
// docs/metrics.md with its type and label names, and every documented one is
// exported. GPU types are held to the contract by the collector's test
// against NVML's mock; here they are checked by descriptor.
func TestMetricContract(t *testing.T) {
	contract, err := testkit.ReadMetricDoc("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}

	// A reasoning model, for the reasoning series, with a prefix cache its
	// usage reports, for the cached prompt tokens.
	srv, _ := testkit.StartSim(t, func(c *sim.Config) {
		c.PrefillBase, c.DecodeBase = 5*time.Millisecond, 2*time.Millisecond
		c.Faults.ReasoningTokens = 1
		c.PrefixCacheTokens = 4096
	})
	storage := t.TempDir()
	// A target behind TLS, for the certificate's expiry, and a dead one, for failures.
	tlsEngine, err := sim.New(sim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer tlsEngine.Close()
	tlsSrv := httptest.NewTLSServer(tlsEngine.Handler())
	defer tlsSrv.Close()
	// A server whose usage counts fewer tokens than its stream carried.
	miscounted := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for range 4 {
			fmt.Fprint(w, `data: {"choices":[{"index":0,"text":" w","delta":{"content":" w"}}]}`+"\n\n")
		}
		fmt.Fprint(w, `data: {"choices":[{"index":0,"text":"","delta":{},"finish_reason":"length"}],"usage":{"prompt_tokens":16,"completion_tokens":1}}`+"\n\ndata: [DONE]\n\n")
	}))
	defer miscounted.Close()
	cfg := fmt.Sprintf(`targets:
  - {name: sim, url: %q, engine_metrics: {interval: 5s, timeout: 2s}, replicas: {header: Content-Type, values: [text/event-stream]}}
  - {name: tls, url: %q, http_client_config: {tls_config: {insecure_skip_verify: true}}, autoscaling: {max_rate_under_slo: 5}}
  - {name: dead, url: "http://127.0.0.1:1", model: m}
  - {name: embed, url: %[1]q, api: embeddings, timeout: 2s}
  - {name: miscounted, url: %[3]q, model: m}
  - {name: speech, url: %[1]q, api: transcriptions, timeout: 2s}
scenarios:
  - {name: clips, audio: {dataset: %[4]q}}
  - name: checked
    prompt_tokens: 16
    output_tokens: 4
    slo: {ttft: 2s, tpot: 1s, e2e: 5s, stall: 1s}
    quality: {contains: " "}
  - name: chat
    prompt_tokens: 16
    output_tokens: 4
    conversation: {turns: 2}
  - name: tools
    prompt_tokens: 16
    output_tokens: 32
    tools: [{function: {name: get_weather, parameters: {type: object, required: [city], properties: {city: {type: string}}}}}]
    tool_choice: required
  - name: vectors
    prompt_tokens: 8
    inputs: 2
    slo: {e2e: 5s}
canary:
  interval: 200ms
  probes:
    - {scenarios: [checked], targets: [sim, tls, dead, miscounted]}
    - {scenarios: [vectors], targets: [embed]}
    - {scenarios: [clips], targets: [speech], interval: 1s}
    - {scenarios: [chat], targets: [sim], interval: 1s}
    - {scenarios: [tools], targets: [sim], interval: 3s}
# Eight schedules, each bounded as if its target hung to the timeout.
limits: {max_canary_memory: 512MiB}
bursts:
  - name: quick
    target: sim
    scenarios: [{scenario: checked}]
    arrival: {rate: 20}
    requests: 4
    schedule: {on_start: true, every: 1h}
    sweep: {rates: [20]}
comparisons:
  - {name: sim-tls, baseline: sim, candidate: tls, scenarios: [checked], window: 10s}
`, srv.URL, tlsSrv.URL, miscounted.URL, testkit.AudioDataset(t))
	path := testkit.ConfigFile(t, cfg)
	// A stored previous report of the same request set (a baseline must be
	// comparable), so the new burst has a regression verdict.
	loaded, err := plan.Parse([]byte(cfg), path)
	if err != nil {
		t.Fatal(err)
	}
	quick, _ := loaded.Burst("quick")
	previous := report.Build(quick.Burst, report.Run{ID: "quick-20200101T000000Z", Rate: 20, Planned: quick.Burst.Requests, Start: time.Now().Add(-time.Hour)},
		report.Meta{Model: "m", Scenarios: quick.ScenarioConfigs()})
	previous.Latency = map[string]stats.Summary{"ttft": {Count: 1, P50: 0.1, P99: 0.1}}
	if err := store.New(storage, nil).Save(previous, 5); err != nil {
		t.Fatal(err)
	}
	d := New(Options{ConfigFile: path, StoragePath: storage, HistoryRecent: 5, HistoryFailures: 5, GPU: true, GPUTimeout: time.Second})
	d.gpu.Start()
	defer d.stop()
	if err := d.reload(); err != nil {
		t.Fatal(err)
	}
	// A report with GPU energy, as a burst on a GPU node has.
	joules := 0.5
	d.bursts.Restore(&report.Report{Burst: "on-a-gpu-node", GPU: &report.GPUFacts{JoulesPerOutputToken: &joules}})
	// A sweep that found its knee and sized the fleet.
	d.bursts.Restore(sweptReport())
	// An upgrade run's verdict, as a burst with on_engine_change has.
	change := 0.3
	d.bursts.Restore(&report.Report{Burst: "upgraded", Target: "sim", Upgrade: &report.Upgrade{
		From: report.Facts{Engine: "vllm", Version: "0.11.0", Model: "m"}, To: report.Facts{Engine: "vllm", Version: "0.12.0", Model: "m"}, BaselineID: "upgraded-20200101T000000Z",
		Changes: []report.UpgradeChange{{Metric: "tpot", Quantile: "p99", Change: &change, Significant: true, Regression: true}}}})

	// Every lazily created series exists after a successful, quality-checked
	// probe, a target info refresh and the burst.
	lazy := []string{"llmprobe_quality_checks_total", "llmprobe_target_info", "llmprobe_token_count_source_total", "llmprobe_burst_regression_ratio", "llmprobe_burst_measurement_error_bound_seconds",
		"llmprobe_request_failures_total", "llmprobe_target_tls_cert_expiry_timestamp_seconds",
		"llmprobe_engine_latency_seconds", "llmprobe_engine_latency_mean_seconds",
		"llmprobe_time_to_first_answer_token_seconds", "llmprobe_reasoning_output_tokens_total", "llmprobe_time_to_first_tool_call_seconds",
		"llmprobe_conversation_ttft_seconds", "llmprobe_probe_ttft_component_seconds", "llmprobe_prompt_cached_tokens_total",
		"llmprobe_comparison_ratio", "llmprobe_comparison_pairs", "llmprobe_target_embedding_dimension", "llmprobe_token_mismatches_total",
		"llmprobe_target_max_rate_under_slo", "llmprobe_engine_request_rate",
		"llmprobe_audio_seconds_total", "llmprobe_transcript_word_errors_total", "llmprobe_transcript_reference_words_total",
		"llmprobe_replica_requests_total", "llmprobe_replica_time_to_first_token_seconds",
		// Absent without a cgroup: the test machines have one.
		"llmprobe_cgroup_cpu_throttled_seconds_total", "llmprobe_cgroup_cpu_throttled_periods_total"}
	var got map[string]registered
	var missing []string
	defer func() {
		if t.Failed() {
			t.Logf("missing: %v", missing)
		}
	}()
	testkit.WaitUntil(t, "every lazily created series (the last missing ones are logged)", 20*time.Second, func() bool {
		got = gather(t, prometheus.Gatherers(d.pages))
		missing = missing[:0]
		for _, name := range lazy {
			if _, ok := got[name]; !ok {
				missing = append(missing, name)
			}
		}
		return len(missing) == 0
	})
	// The whole page, as Prometheus scrapes it, is lint-clean (GPU series
	// are checked on go-nvml's mock in collector).
	rec := httptest.NewRecorder()
	d.routes().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	testkit.PromtoolCheckMetrics(t, rec.Body.String())

	// GPU series exist only where NVML loads, a comparison's interval and
	// verdict after its window's next evaluation: take their descriptors.
	descs := make(chan *prometheus.Desc, 64)
	d.gpu.Describe(descs)
	d.compare.Describe(descs)
	close(descs)
	for desc := range descs {
		m := descRe.FindStringSubmatch(desc.String())
		if m == nil {
			t.Fatalf("descriptor %s does not parse", desc)
		}
		if _, ok := got[m[1]]; !ok {
			var labels []string
			if m[2] != "" {
				labels = strings.Split(m[2], ",")
			}
			slices.Sort(labels)
			got[m[1]] = registered{Labels: labels}
		}
	}

	documented := map[string]bool{}
	for _, c := range contract {
		documented[c.Name] = true
		r, ok := got[c.Name]
		switch {
		case !ok:
			t.Errorf("%s is documented in docs/metrics.md but not exported", c.Name)
		case r.Type != "" && r.Type != c.Type:
			t.Errorf("%s is a %s, docs/metrics.md says %s", c.Name, r.Type, c.Type)
		case !slices.Equal(r.Labels, c.Labels):
			t.Errorf("%s has labels %v, docs/metrics.md says %v", c.Name, r.Labels, c.Labels)
		}
	}
	for name := range got {
		if !documented[name] {
			t.Errorf("%s is exported but not documented in docs/metrics.md", name)
		}
	}
}

// gather returns the llmprobe_ families with their type and label names.
func gather(t *testing.T, g prometheus.Gatherer) map[string]registered {
	t.Helper()
	fams, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]registered{}
	for _, f := range fams {
		if !strings.HasPrefix(f.GetName(), "llmprobe_") {
			continue
		}
		labels := map[string]bool{}
		for _, m := range f.GetMetric() {
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = true
			}
		}
		names := make([]string, 0, len(labels))
		for l := range labels {
			names = append(names, l)
		}
		slices.Sort(names)
		out[f.GetName()] = registered{Type: strings.ToLower(f.GetType().String()), Labels: names}
	}
	return out
}
