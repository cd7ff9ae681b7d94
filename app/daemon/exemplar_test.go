package daemon

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/testkit"
)

// ttftExemplar is a TTFT bucket line with its exemplar in OpenMetrics:
// the traffic it came from and the request id.
var ttftExemplar = regexp.MustCompile(`(?m)^llmprobe_time_to_first_token_seconds_bucket\{[^}]*traffic="(canary|burst)"[^}]*\} \d+ # \{trace_id="([0-9a-f]{32})"\} [0-9.e+-]+ [0-9.e+-]+$`)

// scrapeOpenMetrics GETs /metrics as Prometheus does, asking for
// OpenMetrics; it returns the Content-Type and the page.
func scrapeOpenMetrics(t *testing.T, base string) (string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/openmetrics-text; version=1.0.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Get("Content-Type"), string(body)
}

// A scrape in OpenMetrics carries the request id on the TTFT buckets, for
// canary and burst traffic; the id is the X-Request-Id the engine got, and
// /probe?id= with it opens that request's page with its timeline. An id
// the daemon no longer holds is a 404 that says why.
func TestExemplarOpensTheProbePage(t *testing.T) {
	srv, _ := testkit.StartSim(t, nil)
	var seen sync.Map // X-Request-Id the engine got
	engine := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("X-Request-Id"); id != "" {
			seen.Store(id, true)
		}
		srv.Config.Handler.ServeHTTP(w, r)
	}))
	defer engine.Close()
	path := testkit.ConfigFile(t, fmt.Sprintf(`targets: [{name: sim, url: %q, api: chat, timeout: 10s}]
scenarios:
  - name: chat
    prompt_tokens: 16
    output_tokens: 8
    slo: {ttft: 2s, tpot: 500ms}
canary: {interval: 1s}
bursts:
  - name: spike
    target: sim
    scenarios: [{scenario: chat}]
    arrival: {rate: 10}
    duration: 1s
    schedule: {every: 1h, on_start: true}
`, engine.URL))
	d := startDaemon(t, Options{ConfigFile: path, StoragePath: t.TempDir(), HistoryRecent: 5, HistoryFailures: 5, HistoryRequests: 100})

	ids := map[string]string{} // traffic -> an exemplar's id
	var page string
	testkit.WaitUntil(t, "TTFT exemplars of canary and burst traffic on /metrics", 30*time.Second, func() bool {
		var ct string
		ct, page = scrapeOpenMetrics(t, d.base)
		if !strings.HasPrefix(ct, "application/openmetrics-text") {
			t.Fatalf("Content-Type %q for an OpenMetrics scrape", ct)
		}
		for _, m := range ttftExemplar.FindAllStringSubmatch(page, -1) {
			ids[m[1]] = m[2]
		}
		return ids["canary"] != "" && ids["burst"] != ""
	})
	for _, name := range []string{"request_duration_seconds", "time_per_output_token_seconds", "inter_token_latency_seconds"} {
		if !regexp.MustCompile(`(?m)^llmprobe_` + name + `_bucket\{.*\} \d+ # \{trace_id="[0-9a-f]{32}"\} `).MatchString(page) {
			t.Errorf("no exemplar on llmprobe_%s", name)
		}
	}
	// The text format has none: it cannot carry them.
	if code, text := d.get("/metrics"); code != http.StatusOK || strings.Contains(text, "trace_id") {
		t.Errorf("text format /metrics (%d) carries exemplars", code)
	}

	for traffic, id := range ids {
		if _, ok := seen.Load(id); !ok {
			t.Errorf("%s exemplar %s is no X-Request-Id the engine got", traffic, id)
		}
		code, page := d.get("/probe?id=" + id)
		for _, want := range []string{
			"<code>" + id + "</code>", "(" + traffic + ")", `id="timeline"`, "<td>due (t_sched)</td>",
			"<td>first byte</td>", "<td>first token</td>", "<td>end of stream</td>", `id="tokens"`, "POST " + engine.URL,
		} {
			if code != http.StatusOK || !strings.Contains(page, want) {
				t.Errorf("/probe?id=%s (%s, %d) lacks %q:\n%s", id, traffic, code, want, page)
			}
		}
	}

	// An id no request of this daemon had.
	code, missing := d.get("/probe?id=00000000000000000000000000000001")
	for _, want := range []string{"is not held", "the last 100 requests of any traffic", "--history.requests", `href="/bursts"`} {
		if code != http.StatusNotFound || !strings.Contains(missing, want) {
			t.Errorf("an unknown id (%d) lacks %q:\n%s", code, want, missing)
		}
	}
}
