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
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/llmprobe/llmprobe/internal/testkit"
)

var binPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "llmprobe-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "llmprobe")
	build := exec.Command("go", "build", "-o", binPath, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building llmprobe:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// daemonProc is a running llmprobe binary.
type daemonProc struct {
	cmd  *exec.Cmd
	base string
	mu   sync.Mutex
	log  bytes.Buffer
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func startDaemon(t *testing.T, args ...string) *daemonProc {
	t.Helper()
	return startBinary(t, binPath, args...)
}

func startBinary(t *testing.T, bin string, args ...string) *daemonProc {
	t.Helper()
	addr := freeAddr(t)
	d := &daemonProc{base: "http://" + addr}
	flags := []string{"--web.listen-address=" + addr}
	if !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--storage.path") }) {
		flags = append(flags, "--storage.path="+t.TempDir())
	}
	d.cmd = exec.Command(bin, append(flags, args...)...)
	stderr, err := d.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			d.mu.Lock()
			d.log.WriteString(sc.Text() + "\n")
			d.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		waited := make(chan error, 1)
		go func() { waited <- d.cmd.Wait() }()
		select {
		case <-waited:
		case <-time.After(10 * time.Second):
			_ = d.cmd.Process.Kill()
			<-waited
			t.Error("llmprobe did not stop within 10s of SIGTERM")
		}
		<-logDone
		if t.Failed() {
			t.Logf("llmprobe log:\n%s", d.logs())
		}
	})
	d.waitFor(t, "ready", func() bool {
		code, _ := d.get("/-/ready")
		return code == http.StatusOK
	})
	return d
}

func (d *daemonProc) logs() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.log.String()
}

func (d *daemonProc) get(path string) (int, string)  { return testkit.Get(d.base + path) }
func (d *daemonProc) post(path string) (int, string) { return testkit.Post(d.base + path) }

// waitFor polls cond until it holds or 20 s pass: polling with a deadline, not a fixed sleep.
func (d *daemonProc) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testkit.WaitUntil(t, what, 20*time.Second, cond)
}

func (d *daemonProc) metrics(t *testing.T) map[string]*dtoFamily {
	t.Helper()
	code, body := d.get("/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d %s", code, body)
	}
	return parseMetrics(t, body)
}

type dtoFamily = struct {
	Type    string
	Samples []*model.Sample
}

func parseMetrics(t *testing.T, body string) map[string]*dtoFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parsing metrics: %v", err)
	}
	out := map[string]*dtoFamily{}
	for name, mf := range fams {
		vec, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{Timestamp: model.Now()}, mf)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = &dtoFamily{Type: mf.GetType().String(), Samples: vec}
	}
	return out
}

// sampleValue finds the sample with the given name and labels.
func sampleValue(fams map[string]*dtoFamily, name string, labels map[string]string) (float64, bool) {
	samples := matching(fams, name, labels)
	if len(samples) == 0 {
		return 0, false
	}
	return float64(samples[0].Value), true
}

// sampleSum adds up every sample with the given name and labels.
func sampleSum(fams map[string]*dtoFamily, name string, labels map[string]string) (sum float64, found bool) {
	samples := matching(fams, name, labels)
	for _, s := range samples {
		sum += float64(s.Value)
	}
	return sum, len(samples) > 0
}

// matching is every sample with the given name and labels.
func matching(fams map[string]*dtoFamily, name string, labels map[string]string) []*model.Sample {
	var out []*model.Sample
	for _, f := range fams {
		for _, s := range f.Samples {
			if string(s.Metric[model.MetricNameLabel]) != name {
				continue
			}
			match := true
			for k, v := range labels {
				if string(s.Metric[model.LabelName(k)]) != v {
					match = false
					break
				}
			}
			if match {
				out = append(out, s)
			}
		}
	}
	return out
}

// The README's first command: no config, the embedded demo, TTFT for target sim.
func TestEndToEndEmbeddedDemo(t *testing.T) {
	d := startDaemon(t)
	var fams map[string]*dtoFamily
	// A scrape may land between a result's families: wait for all three.
	d.waitFor(t, "TTFT observations, a success and an SLO check met for target sim", func() bool {
		fams = d.metrics(t)
		ttft, _ := sampleSum(fams, "llmprobe_time_to_first_token_seconds_count", map[string]string{"target": "sim", "traffic": "canary"})
		ok, _ := sampleSum(fams, "llmprobe_requests_total", map[string]string{"target": "sim", "outcome": "success"})
		_, met := sampleSum(fams, "llmprobe_slo_checks_total", map[string]string{"target": "sim", "objective": "ttft", "result": "met"})
		return ttft > 0 && ok > 0 && met
	})
	for _, name := range []string{
		"llmprobe_inter_token_latency_seconds_count",
		"llmprobe_time_per_output_token_seconds_count",
		"llmprobe_request_duration_seconds_count",
	} {
		if v, ok := sampleSum(fams, name, map[string]string{"target": "sim"}); !ok || v == 0 {
			t.Errorf("%s for target sim = %v (present %v)", name, v, ok)
		}
	}
	// Built without ldflags, the version comes from the build info.
	for _, s := range fams["llmprobe_build_info"].Samples {
		if v := string(s.Metric["version"]); v == "" {
			t.Errorf("llmprobe_build_info has no version: %v", s.Metric)
		}
	}
	if v, ok := sampleValue(fams, "llmprobe_target_info", map[string]string{"target": "sim", "engine": "llmprobe-sim"}); !ok || v != 1 {
		d.waitFor(t, "target info", func() bool {
			v, ok := sampleValue(d.metrics(t), "llmprobe_target_info", map[string]string{"target": "sim", "engine": "llmprobe-sim"})
			return ok && v == 1
		})
	}
	if !strings.Contains(d.logs(), "embedded demo target") || !strings.Contains(d.logs(), "--config.file") {
		t.Errorf("the log does not say it runs the embedded demo and how to point it elsewhere:\n%s", d.logs())
	}
	code, page := d.get("/")
	if code != http.StatusOK || !strings.Contains(page, "sim · chat-") || !strings.Contains(page, "/probe?id=") {
		t.Errorf("landing page (%d) lacks the probe history:\n%s", code, page)
	}
	code, page = d.get("/probe?id=1")
	if code != http.StatusOK || !strings.Contains(page, "POST ") {
		t.Errorf("probe page (%d) lacks the probe log:\n%s", code, page)
	}
}

// --no-metrics.classic-buckets leaves the probe histograms native only: the
// text format has their +Inf bucket, _sum and _count, and nothing else.
func TestNoClassicBuckets(t *testing.T) {
	d := startDaemon(t, "--no-metrics.classic-buckets")
	var fams map[string]*dtoFamily
	d.waitFor(t, "TTFT observations for target sim", func() bool {
		fams = d.metrics(t)
		v, ok := sampleValue(fams, "llmprobe_time_to_first_token_seconds_count", map[string]string{"target": "sim", "traffic": "canary"})
		return ok && v > 0
	})
	buckets := 0
	for _, f := range fams {
		for _, s := range f.Samples {
			name := string(s.Metric[model.MetricNameLabel])
			if !strings.HasPrefix(name, "llmprobe_") || !strings.HasSuffix(name, "_bucket") {
				continue
			}
			buckets++
			if le := s.Metric["le"]; le != "+Inf" {
				t.Errorf("%s has a classic bucket le=%q", s.Metric, le)
			}
		}
	}
	if buckets == 0 {
		t.Error("no +Inf buckets on the page")
	}
}

// An address in use stops llmprobe at once, naming the flag, before the
// demo engine, the configuration or a burst starts.
func TestAddressInUseStopsBeforeAnythingStarts(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	addr := held.Addr().String()
	cmd := exec.Command(binPath, "--web.listen-address="+addr, "--storage.path="+t.TempDir(), "--no-collector.gpu")
	out, err := cmd.CombinedOutput()
	log := string(out)
	if exitCode(err) == 0 || !strings.Contains(log, "--web.listen-address="+addr) || !strings.Contains(log, "address already in use") {
		t.Errorf("exit %d, want a failure naming --web.listen-address=%s:\n%s", exitCode(err), addr, log)
	}
	for _, started := range []string{"configuration loaded", "simulated engine", "burst finished"} {
		if strings.Contains(log, started) {
			t.Errorf("%q before the address was refused:\n%s", started, log)
		}
	}
}
