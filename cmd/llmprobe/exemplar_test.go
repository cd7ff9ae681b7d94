package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/testkit"
)

// promExemplars runs /api/v1/query_exemplars over the last hour and
// returns each exemplar's trace_id with its series' traffic label.
func promExemplars(base, expr string) (map[string]string, error) {
	now := time.Now()
	resp, err := http.Get(base + "/api/v1/query_exemplars?" + url.Values{
		"query": {expr},
		"start": {strconv.FormatInt(now.Add(-time.Hour).Unix(), 10)},
		"end":   {strconv.FormatInt(now.Add(time.Minute).Unix(), 10)},
	}.Encode())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   []struct {
			SeriesLabels map[string]string `json:"seriesLabels"`
			Exemplars    []struct {
				Labels map[string]string `json:"labels"`
			} `json:"exemplars"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("%s", body.Error)
	}
	out := map[string]string{}
	for _, s := range body.Data {
		for _, e := range s.Exemplars {
			out[e.Labels["trace_id"]] = s.SeriesLabels["traffic"]
		}
	}
	return out, nil
}

// A real Prometheus with exemplar storage, scraping llmprobe as it scrapes
// by default (OpenMetrics first), keeps the request ids of the TTFT
// observations, canary and burst, and each opens its request's page.
func TestExemplarsInPrometheus(t *testing.T) {
	srv, _ := testkit.StartSim(t, nil)
	cfgPath := testkit.ConfigFile(t, fmt.Sprintf(`targets: [{name: sim, url: %q, api: chat, timeout: 10s}]
scenarios:
  - name: chat
    prompt_tokens: 16
    output_tokens: 8
    slo: {ttft: 2s, tpot: 500ms}
canary: {interval: 500ms}
bursts:
  - name: spike
    target: sim
    scenarios: [{scenario: chat}]
    arrival: {rate: 10}
    duration: 2s
    schedule: {every: 1h, on_start: true}
`, srv.URL))
	d := startDaemon(t, "--config.file="+cfgPath)
	base := runPrometheus(t, fmt.Sprintf(`global: {scrape_interval: 1s}
scrape_configs:
  - job_name: llmprobe
    static_configs: [{targets: [%q]}]
`, strings.TrimPrefix(d.base, "http://")), "--enable-feature=exemplar-storage")

	var ids map[string]string
	testkit.WaitUntil(t, "canary and burst TTFT exemplars in Prometheus", 60*time.Second, func() bool {
		var err error
		ids, err = promExemplars(base, `llmprobe_time_to_first_token_seconds_bucket{target="sim"}`)
		if err != nil {
			t.Fatal(err)
		}
		var canary, burst bool
		for _, traffic := range ids {
			canary, burst = canary || traffic == "canary", burst || traffic == "burst"
		}
		return canary && burst
	})
	opened := map[string]bool{}
	for id, traffic := range ids {
		if opened[traffic] {
			continue
		}
		code, page := d.get("/probe?id=" + id)
		if code == http.StatusNotFound {
			continue // pushed out of the history already; another will do
		}
		if code != http.StatusOK || !strings.Contains(page, "<code>"+id+"</code>") || !strings.Contains(page, "<td>first token</td>") {
			t.Errorf("/probe?id=%s (%s exemplar from Prometheus): %d\n%s", id, traffic, code, page)
		}
		opened[traffic] = true
	}
	if !opened["canary"] || !opened["burst"] {
		t.Errorf("no exemplar Prometheus kept opened a page for both traffics: %v", opened)
	}
}

// --history.requests out of its range is a usage error that names the
// range, before anything starts.
func TestHistoryRequestsRange(t *testing.T) {
	for _, v := range []string{"-1", "20001"} {
		out, err := exec.Command(binPath, "--history.requests="+v, "--web.listen-address=127.0.0.1:0").CombinedOutput()
		if exitCode(err) != 2 || !strings.Contains(string(out), "--history.requests: "+v+" is out of range 0 to 20000") {
			t.Errorf("--history.requests=%s: exit %d, want 2 and the range:\n%s", v, exitCode(err), out)
		}
	}
}
