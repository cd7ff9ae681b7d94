package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/prober"
)

// A burst of an unstreamed scenario of each API through llmprobe gate
// against the sim: every request succeeds within its e2e objective, the
// report has e2e and the usage's tokens, and TTFT, TPOT and ITL have no
// sample: n/a in the text, the Markdown summary and the report's page.
func TestGateUnstreamed(t *testing.T) {
	srv, _ := simServer(t)
	for _, api := range []string{"chat", "completions", "responses"} {
		t.Run(api, func(t *testing.T) {
			cfg := writeTemp(t, "unstreamed.yml", fmt.Sprintf(`targets: [{name: sim, url: %q, api: %s}]
scenarios:
  - {name: s, stream: false, prompt_tokens: 16, output_tokens: 4, slo: {e2e: 5s, target_ratio: 0.9}}
bursts:
  - {name: whole, target: sim, scenarios: [{scenario: s}], arrival: {rate: 20}, requests: 40}
`, srv.URL, api))
			dir := t.TempDir()
			markdown := filepath.Join(dir, "summary.md")
			rep, out, output := gateReport(t, cfg, "whole", "--output.markdown="+markdown, "--verbose")
			if rep.Outcomes[prober.OutcomeSuccess] != 40 || rep.TokenSources[prober.TokensFromUsage] != 40 {
				t.Errorf("outcomes %v, token sources %v: want 40 successes counted from usage", rep.Outcomes, rep.TokenSources)
			}
			if s := rep.Latency["e2e"]; s.Count != 40 || s.P50 <= 0 {
				t.Errorf("e2e: %d samples, p50 %g", s.Count, s.P50)
			}
			for _, m := range []string{"ttft", "tpot", "itl"} {
				if s, ok := rep.Latency[m]; ok && s.Count != 0 {
					t.Errorf("%s has %d samples; an unstreamed answer has none", m, s.Count)
				}
			}
			if o := rep.Throughput.OutputTokens; o == nil || *o <= 0 {
				t.Errorf("output tokens per second %v, want the usage's", o)
			}
			md, _ := os.ReadFile(markdown)
			page, err := exec.Command(binPath, "report", "show", output).CombinedOutput()
			html, _ := os.ReadFile(strings.TrimSuffix(output, ".json") + ".html")
			if err != nil {
				t.Fatalf("report show: %v\n%s", err, page)
			}
			for name, text := range map[string]string{"gate text": string(out), "markdown": string(md), "page": string(html)} {
				if !naRow(text, "ttft") || !naRow(text, "tpot") || !naRow(text, "itl") {
					t.Errorf("%s does not say TTFT, TPOT and ITL are n/a:\n%s", name, text)
				}
			}
		})
	}
}

// naRow reports whether text has a table row of metric (text, Markdown
// or HTML) whose sample count is 0 and every figure after it n/a.
func naRow(text, metric string) bool {
	tags := regexp.MustCompile(`<[^>]*>|\|`)
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(tags.ReplaceAllString(line, " "))
		if len(f) < 3 || f[0] != metric {
			continue
		}
		i := slices.Index(f, "0")
		if i > 0 && i < len(f)-1 && !slices.ContainsFunc(f[i+1:], func(s string) bool { return s != "n/a" }) {
			return true
		}
	}
	return false
}

// A vision burst through llmprobe gate against the sim: every request
// sends its two images and succeeds with TTFT, and the report's prompt
// tokens are the sim's usage, images included: 16 words and 4 template
// tokens, and 4×4 tokens for each 112 px image, 20 times.
func TestGateImages(t *testing.T) {
	srv, _ := simServer(t)
	cfg := writeTemp(t, "vision.yml", fmt.Sprintf(`targets: [{name: sim, url: %q, api: chat}]
scenarios:
  - {name: v, prompt_tokens: 16, output_tokens: 4, images: {count: 2, width: 112, height: 112}, slo: {ttft: 5s, target_ratio: 0.9}}
bursts:
  - {name: vision, target: sim, scenarios: [{scenario: v}], arrival: {rate: 20}, requests: 40}
`, srv.URL))
	rep, _, _ := gateReport(t, cfg, "vision")
	if rep.Outcomes[prober.OutcomeSuccess] != 40 || rep.Latency["ttft"].Count != 40 {
		t.Errorf("outcomes %v, %d TTFT samples", rep.Outcomes, rep.Latency["ttft"].Count)
	}
	if p := rep.Throughput.PromptTokens; p == nil || math.Abs(*p*rep.DurationSeconds-40*(16+4+2*16)) > 0.5 {
		t.Errorf("prompt tokens %v/s over %gs, want 2080 in all", p, rep.DurationSeconds)
	}
}
