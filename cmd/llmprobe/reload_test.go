package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/llmprobe/llmprobe/sim"
)

const (
	bearerSecret = "sk-llmprobe-TEST-bearer-0123456789"
	headerSecret = "sk-llmprobe-TEST-header-9876543210"
)

// simServer runs the simulated engine and remembers the auth headers it saw.
func simServer(t *testing.T) (*httptest.Server, func() []string) {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.DecodeBase = cfg.DecodeBase / 5
	engine, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization")+"|"+r.Header.Get("X-Api-Key"))
		mu.Unlock()
		engine.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(func() { srv.Close(); engine.Close() })
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

func writeConfig(t *testing.T, path, target, url string) {
	t.Helper()
	cfg := fmt.Sprintf(`targets:
  - name: %s
    url: %s
    timeout: 10s
    http_client_config:
      authorization:
        credentials: %s
      http_headers:
        X-Api-Key: {secrets: [%s]}
scenarios:
  - name: quick
    prompt_tokens: 32
    output_tokens: 8
    slo: {ttft: 1s, target_ratio: 0.9}
canary:
  interval: 200ms
`, target, url, bearerSecret, headerSecret)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestConfigCheck(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yml")
	writeConfig(t, good, "a", "http://127.0.0.1:1")
	out, err := exec.Command(binPath, "--config.file="+good, "--config.check").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "valid") {
		t.Errorf("good config: %v\n%s", err, out)
	}
	out, err = exec.Command(binPath, "--config.file=../../config/testdata/bad_url.yml", "--config.check").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Errorf("bad config: exit %v, want 2\n%s", err, out)
	}
	if !strings.Contains(string(out), "bad_url.yml:4: targets[0].url") {
		t.Errorf("bad config error does not name file, line and field:\n%s", out)
	}
}

// A bad reload keeps the old configuration running; a good one swaps it; the
// secrets reach the target but never /config, /metrics, the pages or the log.
func TestReloadAndSecrets(t *testing.T) {
	srv, seen := simServer(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "llmprobe.yml")
	writeConfig(t, path, "first", srv.URL)
	d := startDaemon(t, "--config.file="+path, "--log.level=debug")

	d.waitFor(t, "a probe of target first", func() bool {
		v, ok := sampleValue(d.metrics(t), "llmprobe_requests_total", map[string]string{"target": "first", "outcome": "success"})
		return ok && v > 0
	})
	if got := seen(); len(got) == 0 || !strings.Contains(got[len(got)-1], "Bearer "+bearerSecret) || !strings.Contains(got[len(got)-1], headerSecret) {
		t.Errorf("the target did not receive the configured credentials: %q", got)
	}

	// A broken file: reload fails, the old config keeps running.
	if err := os.WriteFile(path, []byte("targets: [{name: broken, url: 'ftp://nope'}]\nscenarios: [{name: s}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, body := d.post("/-/reload")
	if code != http.StatusInternalServerError || !strings.Contains(body, "targets[0].url") {
		t.Errorf("bad reload: %d %s", code, body)
	}
	if _, cfg := d.get("/config"); !strings.Contains(cfg, "name: first") {
		t.Errorf("running config replaced by a bad reload:\n%s", cfg)
	}
	if v, _ := sampleValue(d.metrics(t), "llmprobe_config_last_reload_successful", nil); v != 0 {
		t.Errorf("config_last_reload_successful = %v after a bad reload", v)
	}

	// A good file by SIGHUP: the new target is probed, the old one's series go.
	writeConfig(t, path, "second", srv.URL)
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	d.waitFor(t, "a probe of target second", func() bool {
		v, ok := sampleValue(d.metrics(t), "llmprobe_requests_total", map[string]string{"target": "second", "outcome": "success"})
		return ok && v > 0
	})
	fams := d.metrics(t)
	if _, ok := sampleValue(fams, "llmprobe_requests_total", map[string]string{"target": "first"}); ok {
		t.Error("series of the removed target first are still exported")
	}
	if v, _ := sampleValue(fams, "llmprobe_config_last_reload_successful", nil); v != 1 {
		t.Errorf("config_last_reload_successful = %v after a good reload", v)
	}

	_, cfgPage := d.get("/config")
	if !strings.Contains(cfgPage, "<secret>") {
		t.Errorf("/config shows no <secret>:\n%s", cfgPage)
	}
	_, metricsPage := d.get("/metrics")
	_, landing := d.get("/")
	_, probePage := d.get("/probe?id=1")
	for where, text := range map[string]string{"/config": cfgPage, "/metrics": metricsPage, "/": landing, "/probe": probePage, "log": d.logs()} {
		for _, secret := range []string{bearerSecret, headerSecret} {
			if strings.Contains(text, secret) {
				t.Errorf("%s shows the secret %q", where, secret)
			}
		}
	}
}
