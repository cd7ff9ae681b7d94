package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmprobe/llmprobe/internal/testkit"
)

// bins are the test's two binaries: the collector of this module and
// llmprobe, built from the repository root with llmprobe's own go.mod.
var bins struct{ collector, llmprobe string }

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "otelcol-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bins.collector, bins.llmprobe = filepath.Join(dir, "otelcol"), filepath.Join(dir, "llmprobe")
	for _, b := range []struct{ dir, out, pkg string }{{".", bins.collector, "."}, {"../..", bins.llmprobe, "./cmd/llmprobe"}} {
		cmd := exec.Command("go", "build", "-o", b.out, b.pkg)
		cmd.Dir, cmd.Stdout, cmd.Stderr = b.dir, os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building", b.out+":", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// start runs a binary until the test ends, its output kept for failures.
func start(t *testing.T, bin string, args ...string) *testkit.Buffer {
	out := &testkit.Buffer{}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("%s:\n%s", filepath.Base(bin), out.String())
		}
	})
	return out
}

// startCollector runs the collector with its OTLP/HTTP receiver on a free
// port and the file exporter writing every span as OTLP JSON lines to file.
func startCollector(t *testing.T, file string) (endpoint string) {
	addr := freeAddr(t)
	cfg := fmt.Sprintf(`receivers:
  otlp:
    protocols:
      http: {endpoint: %q}
exporters:
  file: {path: %q, format: json, flush_interval: 100ms}
service:
  telemetry:
    metrics: {level: none}
  pipelines:
    traces: {receivers: [otlp], exporters: [file]}
`, addr, file)
	path := filepath.Join(t.TempDir(), "otelcol.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	start(t, bins.collector, "--config=file:"+path)
	testkit.WaitUntil(t, "the collector listening", 30*time.Second, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return "http://" + addr
}

// startLlmprobe runs the daemon on one sim target, canaries every 200 ms,
// with the tracing block given.
func startLlmprobe(t *testing.T, simURL, tracing string) string {
	addr := freeAddr(t)
	cfg := fmt.Sprintf(`targets:
  - {name: sim, url: %q, model: m}
scenarios:
  - {name: chat, prompt_tokens: 32, output_tokens: 8}
canary: {interval: 200ms}
tracing: %s
`, simURL, tracing)
	start(t, bins.llmprobe, "--config.file="+testkit.ConfigFile(t, cfg), "--web.listen-address="+addr, "--storage.path=", "--no-collector.gpu")
	base := "http://" + addr
	testkit.WaitUntil(t, "llmprobe ready", 30*time.Second, func() bool {
		code, _ := testkit.Get(base + "/-/ready")
		return code == http.StatusOK
	})
	return base
}

// spansMetric is one outcome's llmprobe_tracing_spans_total.
func spansMetric(t *testing.T, base, outcome string) float64 {
	_, body := testkit.Get(base + "/metrics")
	m := regexp.MustCompile(`(?m)^llmprobe_tracing_spans_total\{outcome="` + outcome + `"\} (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// exemplarIDs are the trace ids of the TTFT histogram's exemplars, as
// Prometheus would scrape them (OpenMetrics).
func exemplarIDs(t *testing.T, base string) []string {
	req, _ := http.NewRequest(http.MethodGet, base+"/metrics", nil)
	req.Header.Set("Accept", "application/openmetrics-text; version=1.0.0")
	_, body := testkit.Do(req)
	var ids []string
	for _, m := range regexp.MustCompile(`(?m)^llmprobe_time_to_first_token_seconds_bucket\{.*# \{trace_id="([0-9a-f]{32})"\}`).FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// readSpans reads the file exporter's OTLP JSON lines.
func readSpans(t *testing.T, file string) map[string]ptrace.Span {
	out := map[string]ptrace.Span{}
	b, err := os.ReadFile(file)
	if err != nil {
		return out
	}
	var u ptrace.JSONUnmarshaler
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		td, err := u.UnmarshalTraces(sc.Bytes())
		if err != nil {
			t.Fatalf("the collector's file: %v", err)
		}
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					out[sp.TraceID().String()] = sp
				}
			}
		}
	}
	return out
}

// Spans reach a real OpenTelemetry Collector: the TTFT exemplar's trace id
// opens a client span with the GenAI attributes and the request's phases.
func TestSpansReachTheCollector(t *testing.T) {
	srv, _ := testkit.StartSim(t, nil)
	file := filepath.Join(t.TempDir(), "spans.json")
	endpoint := startCollector(t, file)
	base := startLlmprobe(t, srv.URL, fmt.Sprintf("{endpoint: %q}", endpoint))

	var spans map[string]ptrace.Span
	var id string
	testkit.WaitUntil(t, "an exemplar's span in the collector's file", 60*time.Second, func() bool {
		spans = readSpans(t, file)
		for _, x := range exemplarIDs(t, base) {
			if _, ok := spans[x]; ok {
				id = x
				return true
			}
		}
		return false
	})
	sp := spans[id]
	t.Logf("%d spans; the exemplar %s opens %q", len(spans), id, sp.Name())
	if sp.Kind() != ptrace.SpanKindClient || sp.Name() != "chat m" || sp.Status().Code() == ptrace.StatusCodeError {
		t.Errorf("span %q kind %s status %s; want a client span \"chat m\"", sp.Name(), sp.Kind(), sp.Status().Code())
	}
	attrs := sp.Attributes()
	for k, want := range map[string]string{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
		"gen_ai.request.model": "m", "gen_ai.response.model": "m", "server.address": "127.0.0.1", "llmprobe.target": "sim"} {
		if v, ok := attrs.Get(k); !ok || v.Str() != want {
			t.Errorf("%s = %q, want %q", k, v.AsString(), want)
		}
	}
	if v, ok := attrs.Get("gen_ai.usage.output_tokens"); !ok || v.Int() != 8 {
		t.Errorf("gen_ai.usage.output_tokens = %s, want 8", v.AsString())
	}
	if v, ok := attrs.Get("gen_ai.usage.input_tokens"); !ok || v.Int() <= 0 {
		t.Errorf("gen_ai.usage.input_tokens = %s", v.AsString())
	}
	events := map[string]pcommon.Timestamp{}
	for _, ev := range sp.Events().All() {
		events[ev.Name()] = ev.Timestamp()
	}
	if events["first_byte"] == 0 || events["first_token"] == 0 || events["last_token"] != sp.EndTimestamp() || events["first_token"] > events["last_token"] {
		t.Errorf("events %v; want first_byte, first_token, then last_token at the span's end", events)
	}
	if n := spansMetric(t, base, "exported"); n < 1 {
		t.Errorf("llmprobe_tracing_spans_total{outcome=\"exported\"} = %g", n)
	}
}

// llmprobe gate exports a span per burst request, warmup included, and
// says at its end what became of them.
func TestGateExportsItsBurst(t *testing.T) {
	srv, _ := testkit.StartSim(t, nil)
	file := filepath.Join(t.TempDir(), "spans.json")
	endpoint := startCollector(t, file)
	cfg := fmt.Sprintf(`targets:
  - {name: sim, url: %q, model: m}
scenarios:
  - {name: chat, prompt_tokens: 32, output_tokens: 8, slo: {ttft: 5s, target_ratio: 0.5}}
bursts:
  - {name: b, target: sim, scenarios: [{scenario: chat}], arrival: {process: poisson, rate: 20}, requests: 20, warmup: {requests: 2}}
tracing: {endpoint: %q}
`, srv.URL, endpoint)
	out, err := exec.Command(bins.llmprobe, "gate", "--config.file="+testkit.ConfigFile(t, cfg), "--burst=b", "--storage.path=").CombinedOutput()
	if err != nil {
		t.Fatalf("gate: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`spans to \S+: (\d+) exported, 0 failed, 0 dropped`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("the gate does not say what became of its spans:\n%s", out)
	}
	n, _ := strconv.Atoi(string(m[1]))
	var spans map[string]ptrace.Span
	testkit.WaitUntil(t, "the gate's spans in the collector's file", 30*time.Second, func() bool {
		spans = readSpans(t, file)
		return len(spans) >= n
	})
	// Every request sent as sampled has its span: 20 measured, 2 warmup, 1 preflight.
	if n != 23 || len(spans) != n {
		t.Errorf("the gate says %d spans exported, the collector has %d; want 23", n, len(spans))
	}
}

// A collector that is down costs nothing but counted spans: the canaries
// keep succeeding, and every span is failed or dropped.
func TestDeadCollectorOnlyCounts(t *testing.T) {
	srv, _ := testkit.StartSim(t, nil)
	dead := "http://" + freeAddr(t) // nothing listens
	base := startLlmprobe(t, srv.URL, fmt.Sprintf("{endpoint: %q, queue_size: 4, timeout: 1s}", dead))
	testkit.WaitUntil(t, "failed spans counted", 60*time.Second, func() bool {
		return spansMetric(t, base, "failed") >= 4
	})
	_, body := testkit.Get(base + "/metrics")
	m := regexp.MustCompile(`(?m)^llmprobe_requests_total\{.*outcome="success".*\} (\d+)`).FindStringSubmatch(body)
	if m == nil || m[1] == "0" {
		t.Errorf("no successful canary while the collector is down:\n%s", strings.Join(regexp.MustCompile(`(?m)^llmprobe_requests_total.*$`).FindAllString(body, -1), "\n"))
	}
	if n := spansMetric(t, base, "exported"); n != 0 {
		t.Errorf("%g spans exported to nothing", n)
	}
}
