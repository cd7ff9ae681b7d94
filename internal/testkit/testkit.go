// Package testkit holds what tests across llmprobe share: a running
// simulated engine, configuration values, polling, and the tools a test
// needs, so no test package keeps its own copy.
package testkit

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	promconfig "github.com/prometheus/common/config"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/lib/wav"
	"github.com/llmprobe/llmprobe/sim"
)

// StartSim runs the simulated engine behind an httptest server until the test
// ends. Its schedule is known: model "m", 50 ms to the first token, then
// 10 ms per token, whatever the batch; mutate changes it before it starts.
func StartSim(t testing.TB, mutate func(*sim.Config)) (*httptest.Server, *sim.Engine) {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Model = "m"
	cfg.PrefillBase, cfg.PrefillPerToken = 50*time.Millisecond, 0
	cfg.DecodeBase, cfg.DecodePerSeq = 10*time.Millisecond, 0
	if mutate != nil {
		mutate(&cfg)
	}
	e, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e.Handler())
	t.Cleanup(func() { srv.Close(); e.Close() })
	return srv, e
}

// Target is target "t" at url, model "m", with a 5 s timeout.
func Target(url string, api config.API) config.Target {
	t := config.DefaultTarget
	t.Name = "t"
	t.URL = url
	t.API = api
	t.Model = "m"
	t.Timeout = config.Duration(5 * time.Second)
	t.HTTPClientConfig = promconfig.DefaultHTTPClientConfig
	return t
}

// Scenario is scenario "s": 16 prompt tokens, 6 output tokens, no objective.
func Scenario() config.Scenario {
	s := config.DefaultScenario
	s.Name = "s"
	s.PromptTokens = config.Distribution{Kind: config.DistFixed, Value: 16}
	s.OutputTokens = config.Distribution{Kind: config.DistFixed, Value: 6}
	return s
}

// Config parses YAML configuration, failing the test on an error.
func Config(t testing.TB, yaml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml), t.Name()+".yml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// WaitUntil polls cond until it holds, failing the test after timeout:
// polling with a deadline, never a fixed sleep.
func WaitUntil(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		case <-tick.C:
		}
	}
}

// Tool returns the path of a command a test needs (promtool, chromium,
// systemd-analyze). Under CI (CI=true, which .ci/run sets) a missing tool
// fails the test; elsewhere the test is skipped with the way to install it
// (`make test` installs every tool first: scripts/install-test-tools).
func Tool(t testing.TB, name, install string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed, and CI must run this check: %s (make deps does)", name, install)
	}
	t.Skipf("SKIPPED: %s is not installed, so this check did not run; install it with: %s", name, install)
	return ""
}

// Get fetches url and returns the status and body; a transport error comes
// back as status 0 with its text, for the caller to report.
func Get(url string) (int, string) {
	return roundTrip(http.Get(url))
}

// Post sends an empty POST to url, as Get.
func Post(url string) (int, string) {
	return roundTrip(http.Post(url, "", nil))
}

// Do sends req and returns the status and body, as Get does.
func Do(req *http.Request) (int, string) {
	return roundTrip(http.DefaultClient.Do(req))
}

func roundTrip(resp *http.Response, err error) (int, string) {
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err.Error()
	}
	return resp.StatusCode, string(b)
}

// Buffer collects what a logger writes from many goroutines; String reads it.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Take returns everything written so far and forgets it.
func (b *Buffer) Take() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.buf.String()
	b.buf.Reset()
	return s
}

// PromtoolCheckMetrics fails the test unless `promtool check metrics` finds
// nothing to say about exposition, a whole /metrics page.
func PromtoolCheckMetrics(t testing.TB, exposition string) {
	t.Helper()
	promtool := Tool(t, "promtool", "apt-get install prometheus")
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(exposition)
	if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// Proxy forwards one request to base, streaming the answer back as it comes.
func Proxy(w http.ResponseWriter, r *http.Request, base string) {
	req, _ := http.NewRequestWithContext(r.Context(), r.Method, base+r.URL.Path, r.Body)
	req.Header = r.Header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			_, _ = w.Write(buf[:n])
			w.(http.Flusher).Flush()
		}
		if err != nil {
			return
		}
	}
}

// ConfigFile writes a configuration to a file of its own and returns the
// file's path.
func ConfigFile(t testing.TB, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "llmprobe.yml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// AudioReferences are the transcripts of AudioDataset's clips.
var AudioReferences = []string{
	"ask not what your country can do for you",
	"ask what you can do for your country",
	"the quick brown fox jumps over the lazy dog",
}

// AudioDataset writes an audio dataset of three clips (1.5, 2 and 2.5 s of
// a tone) whose WAV comments are their references, so the sim hears them
// right, and returns the dataset's path.
func AudioDataset(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	var lines strings.Builder
	for i, ref := range AudioReferences {
		const rate = 16000
		samples := make([]int, (3+i)*rate/2)
		for k := range samples {
			samples[k] = int(6000 * math.Sin(2*math.Pi*220*float64(k)/rate))
		}
		b, err := wav.Encode(samples, rate, ref)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("clip-%d.wav", i+1)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&lines, `{"id": "clip-%d", "audio": %q, "reference": %q}`+"\n", i+1, name, ref)
	}
	path := filepath.Join(dir, "clips.jsonl")
	if err := os.WriteFile(path, []byte(lines.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
