package main

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/store"
)

// startPrometheus runs a real Prometheus scraping job=llmprobe at target
// every second, and returns its base URL.
func startPrometheus(t *testing.T, target string, flags ...string) string {
	t.Helper()
	return runPrometheus(t, fmt.Sprintf("global: {scrape_interval: 1s}\nscrape_configs:\n  - job_name: llmprobe\n    static_configs: [{targets: [%q]}]\n", target), flags...)
}

// runPrometheus runs a real Prometheus with config cfg until the test ends,
// and returns its base URL once it is ready.
func runPrometheus(t *testing.T, cfg string, flags ...string) string {
	t.Helper()
	bin := testkit.Tool(t, "prometheus", "apt-get install prometheus")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	return runServer(t, bin, addr, append([]string{"--config.file=" + filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path=" + filepath.Join(dir, "data"), "--web.listen-address=" + addr}, flags...)...)
}

// runServer starts bin, a Prometheus server or one of its kind listening on
// addr, and waits for its /-/ready; it stops it at cleanup, showing its log
// if the test failed. It returns the server's base URL.
func runServer(t *testing.T, bin, addr string, args ...string) string {
	t.Helper()
	name := filepath.Base(bin)
	cmd := exec.Command(bin, args...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		waited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(waited) }()
		select {
		case <-waited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-waited
			t.Errorf("%s did not stop within 10s of SIGTERM", name)
		}
		if t.Failed() {
			t.Logf("%s %v log:\n%s", name, args, out.String())
		}
	})
	base := "http://" + addr
	testkit.WaitUntil(t, name+" ready", 30*time.Second, func() bool {
		code, _ := testkit.Get(base + "/-/ready")
		return code == http.StatusOK || code == http.StatusUnauthorized // answering, behind basic auth
	})
	return base
}

// promScalar evaluates expr and returns its single value; ok is false while
// the query has no result.
func promScalar(base, expr string) (v float64, ok bool, err error) {
	samples, err := promInstant(base, expr)
	switch {
	case err != nil:
		return 0, false, fmt.Errorf("%s: %w", expr, err)
	case len(samples) == 0:
		return 0, false, nil
	case len(samples) > 1:
		return 0, false, fmt.Errorf("%s: %d series, want one", expr, len(samples))
	}
	s, _ := samples[0].Value[1].(string)
	v, err = strconv.ParseFloat(s, 64)
	return v, err == nil && !math.IsNaN(v), err
}

// The dashboards read percentiles with histogram_quantile, from the native
// histogram where Prometheus ingests them and else from the classic
// buckets; a burst's report has the exact ones. On the sim, with TTFT where
// SLOs live, the dashboards' query must agree with the report within 10%
// on a Prometheus that reads the classic buckets and within 5% on one that
// ingests native histograms (2.42 with the feature then keeps no classic
// buckets, so each answer comes from one kind).
func TestDashboardP99MatchesReport(t *testing.T) {
	srv, _ := simServer(t)
	storage := t.TempDir()
	// Long prompts put the sim's TTFT in the 50 ms – 2 s band; the canary is
	// slow so that nearly all traffic is the burst's.
	cfg := fmt.Sprintf(`targets: [{name: sim, url: %q, timeout: 10s}]
scenarios:
  - name: long
    prompt_tokens: 600
    output_tokens: 16
    slo: {ttft: 2s, target_ratio: 0.9}
canary: {interval: 1m}
bursts:
  - name: p99
    target: sim
    scenarios: [{scenario: long}]
    arrival: {rate: 15}
    duration: 20s
    schedule: {on_start: true}
`, srv.URL)
	cfgPath := testkit.ConfigFile(t, cfg)
	d := startDaemon(t, "--config.file="+cfgPath, "--storage.path="+storage)
	host := strings.TrimPrefix(d.base, "http://")
	classic := startPrometheus(t, host)
	native := startPrometheus(t, host, "--enable-feature=native-histograms")

	var rep *report.Report
	testkit.WaitUntil(t, "the burst's report", 90*time.Second, func() bool {
		rep, _ = store.New(storage, nil).Latest("p99")
		return rep != nil
	})
	exact := rep.Latency["ttft"]
	if exact.Count < 150 {
		t.Fatalf("the burst measured %d TTFTs; want at least 150", exact.Count)
	}
	sel := `{traffic="burst", target="sim"}`
	// The dashboards' form, over the whole burst instead of a rate window.
	p99 := `histogram_quantile(0.99, sum(llmprobe_time_to_first_token_seconds` + sel + `))` +
		` or histogram_quantile(0.99, sum by (le) (llmprobe_time_to_first_token_seconds_bucket` + sel + `))`
	queries := map[string]struct {
		base, p99, count string
		within           float64
	}{
		"classic buckets":  {classic, p99, `sum(llmprobe_time_to_first_token_seconds_count` + sel + `)`, 0.10},
		"native histogram": {native, p99, `histogram_count(sum(llmprobe_time_to_first_token_seconds` + sel + `))`, 0.05},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for name, q := range queries {
		// Wait for a scrape after the burst's last request.
		for {
			n, ok, err := promScalar(q.base, q.count)
			if err != nil {
				t.Fatal(err)
			}
			if ok && int(n) == exact.Count {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("%s: Prometheus has %v TTFTs of the burst (ok %v), the report %d", name, n, ok, exact.Count)
			}
			time.Sleep(200 * time.Millisecond)
		}
		got, ok, err := promScalar(q.base, q.p99)
		if err != nil || !ok {
			t.Fatalf("%s: %s: %v (result %v)", name, q.p99, err, ok)
		}
		off := math.Abs(got/exact.P99 - 1)
		t.Logf("%s: histogram_quantile p99 %.1f ms, report's exact p99 %.1f ms (%d requests, p50 %.1f ms): %.1f%% off",
			name, 1000*got, 1000*exact.P99, exact.Count, 1000*exact.P50, 100*off)
		if off > q.within {
			t.Errorf("%s: p99 %.4fs from Prometheus is %.1f%% off the exact %.4fs; want within %.0f%%", name, got, 100*off, exact.P99, 100*q.within)
		}
	}
}
