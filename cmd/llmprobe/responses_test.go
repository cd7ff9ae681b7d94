package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
)

// A burst of an api: responses target through llmprobe gate against the
// sim: every request succeeds, its report has TTFT, ITL, TPOT and e2e, and
// the token counts come from response.completed's usage.
func TestGateResponses(t *testing.T) {
	srv, _ := simServer(t)
	cfg := writeTemp(t, "responses.yml", fmt.Sprintf(`targets: [{name: sim, url: %q, api: responses}]
scenarios:
  - {name: s, prompt_tokens: 16, output_tokens: 4, slo: {ttft: 2s, target_ratio: 0.9}}
bursts:
  - name: responses
    target: sim
    scenarios: [{scenario: s}]
    arrival: {rate: 20}
    requests: 20
`, srv.URL))
	rep, _, _ := gateReport(t, cfg, "responses")
	if rep.Outcomes[prober.OutcomeSuccess] != 20 || rep.TokenSources[prober.TokensFromUsage] != 20 {
		t.Errorf("outcomes %v, token sources %v: want 20 successes counted from usage", rep.Outcomes, rep.TokenSources)
	}
	for metric, n := range map[string]int{"ttft": 20, "tpot": 20, "e2e": 20, "itl": 60} {
		if s := rep.Latency[metric]; s.Count != n || s.P50 <= 0 {
			t.Errorf("%s: %d samples, p50 %g; want %d samples", metric, s.Count, s.P50, n)
		}
	}
}

// gateReport runs llmprobe gate on burst of the configuration file cfg,
// with args besides, and returns its report, its output and the report's
// file: the run must pass.
func gateReport(t *testing.T, cfg, burst string, args ...string) (rep report.Report, out, file string) {
	t.Helper()
	file = filepath.Join(t.TempDir(), "report.json")
	b, err := exec.Command(binPath, append([]string{"gate", "--config.file=" + cfg, "--burst=" + burst, "--output=" + file, "--storage.path="}, args...)...).CombinedOutput()
	if exitCode(err) != 0 || !strings.Contains(string(b), "gate: passed") {
		t.Fatalf("exit %d\n%s", exitCode(err), b)
	}
	out = string(b)
	if b, err = os.ReadFile(file); err != nil || json.Unmarshal(b, &rep) != nil {
		t.Fatalf("report %s: %v", file, err)
	}
	return rep, out, file
}
