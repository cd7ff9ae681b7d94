package daemon

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/testkit"
)

// Canaries of an unstreamed scenario against the sim: /metrics has their
// e2e and tokens but no TTFT, TPOT or ITL sample; their probe page says
// TTFT, TPOT and the longest gap are n/a and why; /probe answers e2e and
// no TTFT, TPOT or TTFT split gauge. Never a 0 where nothing was measured.
// Beside them, a vision scenario's canaries measure TTFT, and the page
// promtool reads stays clean.
func TestUnstreamedOnEverySurface(t *testing.T) {
	srv, _ := testkit.StartSim(t, nil)
	cfg := fmt.Sprintf(`targets: [{name: sim, url: %q, model: m, api: chat, timeout: 5s}]
scenarios:
  - {name: whole, stream: false, prompt_tokens: 16, output_tokens: 4, slo: {e2e: 5s}}
  - {name: vision, prompt_tokens: 16, output_tokens: 4, images: {count: 2, width: 64, height: 64}, slo: {ttft: 5s}}
canary: {interval: 100ms}
`, srv.URL)
	path := testkit.ConfigFile(t, cfg)
	d := startDaemon(t, Options{ConfigFile: path, StoragePath: t.TempDir(), HistoryRecent: 5, HistoryFailures: 5})
	count := func(family, scenario string) int {
		m := regexp.MustCompile(family + `_count\{[^}]*scenario="` + scenario + `"[^}]*\} ([0-9]+)`).FindStringSubmatch(metrics(d))
		if m == nil {
			return 0
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	testkit.WaitUntil(t, "two canaries of each scenario measured", 10*time.Second, func() bool {
		return count("llmprobe_request_duration_seconds", "whole") >= 2 && count("llmprobe_time_to_first_token_seconds", "vision") >= 2
	})
	metrics := metrics(d)
	testkit.PromtoolCheckMetrics(t, metrics)
	// 16 words, the template's 4 tokens and 2 × 2×2 image tokens, per canary.
	if p := regexp.MustCompile(`llmprobe_prompt_tokens_total\{[^}]*scenario="vision"[^}]*\} ([0-9]+)`).FindStringSubmatch(metrics); p == nil || p[1] == "0" {
		t.Errorf("no prompt tokens of the vision canaries:\n%s", grepLines(metrics, "prompt_tokens_total"))
	} else if n, _ := strconv.Atoi(p[1]); n%28 != 0 {
		t.Errorf("%d prompt tokens of vision canaries: not 28 each (text and images)", n)
	}
	for _, family := range []string{"llmprobe_time_to_first_token_seconds", "llmprobe_time_per_output_token_seconds", "llmprobe_inter_token_latency_seconds"} {
		for _, line := range strings.Split(metrics, "\n") {
			if strings.HasPrefix(line, family+"_count") && strings.Contains(line, `scenario="whole"`) && !strings.HasSuffix(line, " 0") {
				t.Errorf("an unstreamed answer observed %s", line)
			}
		}
	}
	if !strings.Contains(metrics, `llmprobe_token_count_source_total{model="m",scenario="whole",source="usage",target="sim",traffic="canary"}`) {
		t.Errorf("no token counts from usage:\n%s", grepLines(metrics, "token_count_source"))
	}

	code, page := d.get("/probe?id=" + probeID(t, d, "whole"))
	for _, want := range []string{"n/a (unstreamed answer: stream: false)", "<th>TPOT</th><td>n/a</td>", "<th>longest gap</th><td>n/a</td>", "in one body", "<td>answer read</td>", "unstreamed (TTFT, ITL, TPOT: n/a)"} {
		if code != http.StatusOK || !strings.Contains(page, want) {
			t.Errorf("probe page (%d) lacks %q", code, want)
		}
	}
	if strings.Contains(page, "<td>first token</td>") {
		t.Error("the probe page shows a first token of an unstreamed answer")
	}

	code, body := d.get("/probe?scenario=whole&target=" + srv.URL)
	if code != http.StatusOK || !strings.Contains(body, "llmprobe_probe_request_duration_seconds ") || !strings.Contains(body, "probe_success 1") {
		t.Fatalf("/probe: %d\n%s", code, body)
	}
	for _, absent := range []string{"llmprobe_probe_time_to_first_token_seconds", "llmprobe_probe_time_per_output_token_seconds", "llmprobe_probe_ttft_component_seconds{"} {
		if strings.Contains(body, absent) {
			t.Errorf("/probe of an unstreamed answer has %s", absent)
		}
	}
}

// metrics is the daemon's /metrics page.
func metrics(d *running) string {
	_, body := d.get("/metrics")
	return body
}

// probeID is the number of the newest probe of scenario on the landing
// page, under its heading.
func probeID(t *testing.T, d *running, scenario string) string {
	t.Helper()
	_, page := d.get("/")
	_, section, ok := strings.Cut(page, "· "+scenario+"</h3>")
	m := regexp.MustCompile(`href="/probe\?id=([0-9]+)"`).FindStringSubmatch(section)
	if !ok || m == nil {
		t.Fatalf("no probe of %s on the landing page:\n%s", scenario, page)
	}
	return m[1]
}
