package main

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// echoServer answers every request with status, its body holding every
// request header and the request body: the worst a target can do with
// llmprobe's credentials.
func echoServer(t *testing.T, status int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var sb strings.Builder
		names := make([]string, 0, len(r.Header))
		for k := range r.Header {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			fmt.Fprintf(&sb, "%s: %s; ", k, strings.Join(r.Header.Values(k), ", "))
		}
		w.Header().Set("Server", "echo/"+r.Header.Get("X-Api-Key"))
		w.WriteHeader(status)
		fmt.Fprintf(w, "%s %s saw %s body %s", r.Method, r.URL.Path, sb.String(), body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Targets that echo every credential back, one of each kind: no secret may
// reach a page, /metrics, /config, a debug log line, a stored report or the
// gate's output.
func TestEchoedSecretsReachNoSurface(t *testing.T) {
	dir := t.TempDir()
	secrets := map[string]string{
		"credentials_file":         "sk-TEST-credfile-5f1e2d3c4b5a",
		"http_headers secret":      "sk-TEST-headersecret-a1b2c3d4",
		"http_headers file":        "sk-TEST-headerfile-99887766",
		"basic_auth password_file": "TEST-passw0rd+/=file",
		"inline credentials":       "sk-TEST-inline-0a0b0c0d0e",
		"tracing header file":      "sk-TEST-tracingfile-1a2b3c4d",
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	credFile := write("cred", secrets["credentials_file"])
	headerFile := write("header", secrets["http_headers file"])
	passFile := write("pass", secrets["basic_auth password_file"])
	tracingFile := write("tracing", secrets["tracing header file"])
	secrets["basic_auth header"] = base64.StdEncoding.EncodeToString([]byte("probe-user:" + secrets["basic_auth password_file"]))

	unauthorized, failing := echoServer(t, http.StatusUnauthorized), echoServer(t, http.StatusInternalServerError)
	cfgPath := write("llmprobe.yml", fmt.Sprintf(`targets:
  - name: bearer-file
    url: %[1]s
    model: m
    timeout: 2s
    http_client_config:
      authorization: {credentials_file: %[3]s}
      http_headers:
        X-Api-Key: {secrets: [%[5]s]}
        X-Token: {files: [%[4]s]}
  - name: basic
    url: %[2]s
    timeout: 2s
    http_client_config:
      basic_auth: {username: probe-user, password_file: %[6]s}
  - name: inline
    url: %[2]s
    model: m
    timeout: 2s
    http_client_config:
      authorization: {credentials: %[7]s}
scenarios:
  - name: s
    prompt_tokens: 8
    output_tokens: 4
    slo: {ttft: 1s, target_ratio: 0.9}
canary:
  interval: 200ms
bursts:
  - name: echo-burst
    target: bearer-file
    scenarios: [{scenario: s}]
    arrival: {process: constant, rate: 20}
    requests: 5
    schedule: {on_start: true}
  - name: gate-burst
    target: inline
    scenarios: [{scenario: s}]
    arrival: {process: constant, rate: 20}
    requests: 3
# A collector that echoes its tenant header in its error answers.
tracing:
  endpoint: %[2]s
  http_client_config:
    http_headers:
      X-Scope-OrgID: {files: [%[8]s]}
`, unauthorized.URL, failing.URL, credFile, headerFile, secrets["http_headers secret"], passFile, secrets["inline credentials"], tracingFile))

	storage := t.TempDir()
	d := startBinary(t, binPath, "--config.file="+cfgPath, "--storage.path="+storage, "--log.level=debug")
	d.waitFor(t, "every target to fail and the burst to be stored", func() bool {
		_, landing := d.get("/")
		reports, _ := filepath.Glob(filepath.Join(storage, "echo-burst", "*.json"))
		return strings.Count(landing, "&lt;secret&gt;") >= 3 && len(reports) == 1 &&
			strings.Contains(d.logs(), "spans could not be exported")
	})

	surfaces := map[string]string{}
	for _, path := range []string{"/", "/bursts", "/config", "/metrics"} {
		_, surfaces[path] = d.get(path)
	}
	for _, m := range regexp.MustCompile(`href="(/(?:probe\?id=\d+|bursts/[^"]+))"`).FindAllStringSubmatch(surfaces["/"]+surfaces["/bursts"], -1) {
		_, surfaces[m[1]] = d.get(strings.ReplaceAll(m[1], "&amp;", "&"))
	}
	reports, _ := filepath.Glob(filepath.Join(storage, "*", "*.json"))
	for _, f := range reports {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		surfaces[f] = string(b)
	}
	out := filepath.Join(t.TempDir(), "gate.json")
	gate, _ := exec.Command(binPath, "gate", "--config.file="+cfgPath, "--burst=gate-burst", "--storage.path="+t.TempDir(), "--output="+out, "--no-collector.gpu").CombinedOutput()
	surfaces["gate output"] = string(gate)
	surfaces["debug log"] = d.logs()

	for where, text := range surfaces {
		for kind, secret := range secrets {
			if strings.Contains(text, secret) {
				t.Errorf("%s shows the %s secret", where, kind)
			}
		}
	}
	// The echoes did reach each surface that shows failures, masked.
	for _, where := range []string{"/", "gate output", "debug log"} {
		if !strings.Contains(surfaces[where], "<secret>") && !strings.Contains(surfaces[where], "&lt;secret&gt;") {
			t.Errorf("%s shows no masked echo: the test proves nothing there\n%.2000s", where, surfaces[where])
		}
	}
	// The collector's echo of the tenant header reached the log, masked.
	for _, line := range strings.Split(surfaces["debug log"], "\n") {
		if strings.Contains(line, "spans could not be exported") && !strings.Contains(line, "<secret>") {
			t.Errorf("the failed export's log line shows no masked echo: %s", line)
		}
	}
	if len(surfaces) < 10 {
		t.Errorf("only %d surfaces read", len(surfaces))
	}
	t.Logf("%d surfaces read, %d secrets looked for", len(surfaces), len(secrets))
}
