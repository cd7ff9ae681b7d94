package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/testkit"
)

// /probe from a real Prometheus, configured by examples/prometheus/probe.yml
// with file-based service discovery: a sim, a sim that wants the probe:
// block's bearer token, a dead port and a configured target by name. Each
// must show up as its own instance, with the truth about it.
func TestProbeEndpointFromPrometheus(t *testing.T) {
	open, _ := testkit.StartSim(t, nil)
	const token = "sk-probe-fleet-token-0451"
	guardedSim, _ := testkit.StartSim(t, nil)
	guarded := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			// Echo what came, as a careless server might.
			http.Error(w, "bad credentials: "+r.Header.Get("Authorization"), http.StatusUnauthorized)
			return
		}
		guardedSim.Config.Handler.ServeHTTP(w, r)
	}))
	defer guarded.Close()
	dead := "http://" + freeAddr(t)

	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "llmprobe.yml")
	if err := os.WriteFile(cfgPath, []byte(fmt.Sprintf(`targets: [{name: configured, url: %q}]
scenarios:
  - name: chat
    prompt_tokens: 16
    output_tokens: 8
    slo: {ttft: 2s, tpot: 1ms}
canary: {interval: 1h}
probe:
  timeout: 5s
  http_client_config: {authorization: {credentials_file: %q}}
`, open.URL, tokenFile)), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, "--config.file="+cfgPath)

	// The example job, pointed at this llmprobe and these servers.
	example, err := os.ReadFile("../../examples/prometheus/probe.yml")
	if err != nil {
		t.Fatal(err)
	}
	sd := filepath.Join(dir, "servers.json")
	servers := []string{open.URL, guarded.URL, dead, "configured"}
	b, _ := json.Marshal([]map[string]any{{"targets": servers}})
	if err := os.WriteFile(sd, b, 0o600); err != nil {
		t.Fatal(err)
	}
	promCfg := strings.NewReplacer("/etc/prometheus/llm-servers.json", sd, "llmprobe:9479", strings.TrimPrefix(d.base, "http://")).Replace(string(example))
	promCfg = regexp.MustCompile(`scrape_interval: \S+`).ReplaceAllString(promCfg, "scrape_interval: 1s")
	promCfg = regexp.MustCompile(`scrape_timeout: \S+`).ReplaceAllString(promCfg, "scrape_timeout: 1s")
	base := runPrometheus(t, promCfg)

	want := []struct{ expr, what string }{
		{`probe_success{instance=%q} == 1 and on (instance) llmprobe_probe_time_to_first_token_seconds{instance=%[1]q} > 0 and on (instance) llmprobe_probe_output_tokens{instance=%[1]q} > 0`, "a measured success"},
		{`llmprobe_probe_slo_met{instance=%q, objective="tpot"} == 0 and on (instance) llmprobe_probe_good{instance=%[1]q} == 0`, "the 1ms TPOT objective missed"},
	}
	for _, server := range []string{open.URL, guarded.URL, "configured"} {
		for _, w := range want {
			waitForQuery(t, base, fmt.Sprintf(w.expr, server), server+": "+w.what)
		}
	}
	waitForQuery(t, base, fmt.Sprintf(`probe_success{instance=%q} == 0 and on (instance) llmprobe_probe_outcome{instance=%[1]q, outcome="connection_error"} == 1 and on (instance) llmprobe_probe_failure{instance=%[1]q, reason="connection_refused"} == 1`, dead),
		dead+": down, connection refused")
	if n, _ := promQuery(t, base, `up{job="llm-probe"} == 1`); n != len(servers) {
		t.Errorf("%d of %d probe scrapes are up; a failed probe is still a successful scrape", n, len(servers))
	}

	// What Prometheus scraped is lint-clean, the debug log explains a
	// failure, and nothing carries the token the guarded server echoes.
	code, body := d.get("/probe?target=" + guarded.URL + "&scenario=chat")
	if code != http.StatusOK {
		t.Fatalf("/probe: %d %s", code, body)
	}
	testkit.PromtoolCheckMetrics(t, body)
	code, debug := d.get("/probe?target=" + dead + "&scenario=chat&debug=true")
	if code != http.StatusOK || !strings.Contains(debug, "connection_error") || !strings.Contains(debug, "refused") {
		t.Errorf("/probe debug of a dead port: %d\n%s", code, debug)
	}
	if strings.Contains(d.logs(), token) || strings.Contains(body, token) {
		t.Errorf("the probe: block's token reached the log or /probe")
	}
	// Bad parameters are refused with the reason.
	for path, wantText := range map[string]string{
		"/probe?scenario=chat":                               "target parameter is missing",
		"/probe?target=" + open.URL + "&scenario=nope":       `scenario "nope" is not configured; configured scenarios: chat`,
		"/probe?target=nowhere&scenario=chat":                `"nowhere" is neither a configured target (configured) nor an http(s) URL`,
		"/probe?target=http://u:p@127.0.0.1:1&scenario=chat": "must not carry credentials",
	} {
		if code, body := d.get(path); code != http.StatusBadRequest || !strings.Contains(body, wantText) {
			t.Errorf("GET %s: %d %q, want 400 with %q", path, code, body, wantText)
		}
	}
}

// waitForQuery polls Prometheus until expr has a result.
func waitForQuery(t *testing.T, base, expr, what string) {
	t.Helper()
	testkit.WaitUntil(t, what+" in Prometheus ("+expr+")", 30*time.Second, func() bool {
		n, err := promQuery(t, base, expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return n > 0
	})
}
