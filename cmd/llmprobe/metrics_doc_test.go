package main

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"

	"github.com/llmprobe/llmprobe/collector"
	"github.com/llmprobe/llmprobe/internal/metricdoc"
	"github.com/llmprobe/llmprobe/prober"
)

var fqNameRe = regexp.MustCompile(`fqName: "([^"]+)"`)

// Every registered llmprobe_ metric is documented in docs/metrics.md, and
// every documented one is registered.
func TestMetricsDocumented(t *testing.T) {
	documented, err := metricdoc.Names("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}

	srv, _ := simServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reg := prometheus.NewRegistry()
	reg.MustRegister(versioncollector.NewCollector("llmprobe"), collectors.NewGoCollector())
	// A stored previous report, so the new burst has a regression verdict.
	storage := t.TempDir()
	previous := &prober.Report{ID: "quick-20200101T000000Z", Burst: "quick", Latency: map[string]prober.Summary{"ttft": {Count: 1, P50: 0.1, P99: 0.1}}}
	if err := prober.NewStore(storage).Save(previous, 5); err != nil {
		t.Fatal(err)
	}
	gpu := collector.NewGPU(log.NewNopLogger(), time.Second)
	gpu.Start()
	defer gpu.Stop()
	reg.MustRegister(gpu)
	d := newDaemon(ctx, log.NewNopLogger(), reg, 5, 5, storage, gpu)
	defer d.stop()
	cfg := fmt.Sprintf(`targets: [{name: sim, url: %q}]
scenarios:
  - name: checked
    prompt_tokens: 16
    output_tokens: 4
    slo: {ttft: 2s, tpot: 1s, e2e: 5s, stall: 1s}
    quality: {contains: " "}
canary: {interval: 200ms}
bursts:
  - name: quick
    target: sim
    scenarios: [{scenario: checked}]
    arrival: {rate: 20}
    requests: 4
    schedule: {on_start: true}
    sweep: {rates: [20]}
`, srv.URL)
	if _, err := d.safe.ReloadBytes([]byte(cfg), "test"); err != nil {
		t.Fatal(err)
	}
	d.apply()

	// Wait until every lazily created series exists: after a successful,
	// quality-checked probe and a target info refresh.
	deadline := time.Now().Add(20 * time.Second)
	var registered []string
	for {
		registered = registered[:0]
		fams, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fams {
			if strings.HasPrefix(f.GetName(), "llmprobe_") {
				registered = append(registered, f.GetName())
			}
		}
		if slices.Contains(registered, "llmprobe_quality_checks_total") && slices.Contains(registered, "llmprobe_target_info") &&
			slices.Contains(registered, "llmprobe_token_count_source_total") && slices.Contains(registered, "llmprobe_burst_regression_ratio") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics never all appeared; have %v", registered)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// GPU series exist only where NVML loads, and a burst's energy only on a
	// GPU node: take those collectors' descriptors too.
	descs := make(chan *prometheus.Desc, 64)
	gpu.Describe(descs)
	d.bursts.Describe(descs)
	close(descs)
	for desc := range descs {
		if m := fqNameRe.FindStringSubmatch(desc.String()); m != nil && !slices.Contains(registered, m[1]) {
			registered = append(registered, m[1])
		}
	}
	slices.Sort(registered)
	for _, name := range registered {
		if !slices.Contains(documented, name) {
			t.Errorf("%s is exported but not documented in docs/metrics.md", name)
		}
	}
	for _, name := range documented {
		if !slices.Contains(registered, name) {
			t.Errorf("%s is documented in docs/metrics.md but not exported", name)
		}
	}
}
