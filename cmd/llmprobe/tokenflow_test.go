package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/sim"
)

// tokenFlowDaemon runs llmprobe on one target at a canary a second with a
// 2 s timeout, and a 5 s health window without startup grace.
func tokenFlowDaemon(t *testing.T, targetYAML string) *daemonProc {
	t.Helper()
	cfg := "targets:\n  - " + targetYAML + `
scenarios:
  - {name: chat, prompt_tokens: 32, output_tokens: 8}
canary: {interval: 1s}
`
	return startDaemon(t, "--config.file="+testkit.ConfigFile(t, cfg), "--health.window=5s", "--health.startup-grace=0s")
}

// waitHealth polls /-/healthy/sim until its status is code, and returns the
// body and how long it took.
func waitHealth(t *testing.T, d *daemonProc, code int, within time.Duration) (string, time.Duration) {
	t.Helper()
	start := time.Now()
	var body string
	testkit.WaitUntil(t, fmt.Sprintf("/-/healthy/sim answering %d", code), within, func() bool {
		var got int
		got, body = d.get("/-/healthy/sim")
		return got == code
	})
	return body, time.Since(start)
}

// The health check proves tokens flow: an engine that stops generating
// while its own /health still answers 200 turns it 503 within the window
// (plus the requests' timeout), and 200 again once tokens flow.
func TestTargetHealthTurnsOnTokens(t *testing.T) {
	srv, engine := testkit.StartSim(t, nil)
	url := srv.URL
	d := tokenFlowDaemon(t, fmt.Sprintf(`{name: sim, url: %q, timeout: 2s}`, url))
	testkit.WaitUntil(t, "tokens flowing", 20*time.Second, func() bool {
		code, body := d.get("/-/healthy/sim")
		return code == http.StatusOK && strings.HasPrefix(body, "tokens flow: the last token ")
	})
	if code, _ := d.get("/-/healthy/nosuch"); code != http.StatusNotFound {
		t.Errorf("/-/healthy/nosuch: %d, want 404", code)
	}

	if err := engine.SetFaults(sim.Faults{Hang: true}); err != nil {
		t.Fatal(err)
	}
	body, took := waitHealth(t, d, http.StatusServiceUnavailable, 30*time.Second)
	t.Logf("503 %s after the sim stopped generating: %s", took.Round(time.Second), body)
	if !strings.HasPrefix(body, "no token flows: ") || !strings.Contains(body, "requests reached the engine since the last token") {
		t.Errorf("a hung engine: %q", body)
	}
	if code, _ := testkit.Get(url + "/health"); code != http.StatusOK {
		t.Errorf("the sim's own /health answered %d while hung; the fault wants 200", code)
	}

	if err := engine.SetFaults(sim.Faults{}); err != nil {
		t.Fatal(err)
	}
	body, took = waitHealth(t, d, http.StatusOK, 30*time.Second)
	t.Logf("200 %s after tokens flowed again: %s", took.Round(time.Second), body)
}

// llmprobe's own failure (a wrong token) is no reason to restart the
// engine: 200, with a warning that says whose the fault is.
func TestTargetHealthIgnoresOwnFailures(t *testing.T) {
	url := tokenSim(t) // wants ciToken
	dir := t.TempDir()
	wrong := filepath.Join(dir, "token")
	if err := os.WriteFile(wrong, []byte("not-the-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := tokenFlowDaemon(t, fmt.Sprintf(`{name: sim, url: %q, timeout: 2s, http_client_config: {authorization: {credentials_file: %q}}}`, url, wrong))
	var body string
	testkit.WaitUntil(t, "a warning of llmprobe's own failures", 20*time.Second, func() bool {
		var code int
		code, body = d.get("/-/healthy/sim")
		return code == http.StatusOK && strings.Contains(body, "warning: llmprobe's own requests failed before the engine")
	})
	if strings.Contains(body, "not-the-token") {
		t.Errorf("the health check shows the token: %q", body)
	}
	t.Logf("wrong credentials: %s", body)
}

// An engine that only queues (one batch slot, held by a long request) is
// not hung: its metrics show requests waiting, and the check stays 200 with
// a warning while the canaries time out in the queue.
func TestTargetHealthTellsQueueingFromHung(t *testing.T) {
	srv, _ := testkit.StartSim(t, func(c *sim.Config) { c.MaxBatch = 1 })
	url := srv.URL
	d := tokenFlowDaemon(t, fmt.Sprintf(`{name: sim, url: %q, timeout: 2s, engine_metrics: {interval: 5s, timeout: 2s}}`, url))
	testkit.WaitUntil(t, "tokens flowing", 20*time.Second, func() bool {
		code, body := d.get("/-/healthy/sim")
		return code == http.StatusOK && strings.HasPrefix(body, "tokens flow: the last token ")
	})

	// One request that decodes for minutes holds the only slot.
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	go func() {
		req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", strings.NewReader(`{"model":"m","stream":true,"max_tokens":100000,"ignore_eos":true,"messages":[{"role":"user","content":"hold"}]}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			<-hold
			resp.Body.Close()
		}
	}()
	var body string
	testkit.WaitUntil(t, "the check to see the queue", 40*time.Second, func() bool {
		var code int
		code, body = d.get("/-/healthy/sim")
		if code != http.StatusOK {
			t.Fatalf("a queueing engine answered %d: %s", code, body)
		}
		return strings.HasPrefix(body, "the engine is queueing, not hung")
	})
	if !strings.Contains(body, "requests waiting") {
		t.Errorf("queueing: %q", body)
	}
	t.Logf("queueing: %s", body)
}
