package daemon

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/sim"
)

// apiPair is one canary pair of the every-API daemon, and what its
// answers have.
type apiPair struct {
	target, scenario string
	tokens           bool // the answers have output tokens
	tokenTimes       bool // TTFT, TPOT and ITL apply
	checked          bool // a quality check runs on every answer
}

// One daemon against the sim measures every API it speaks with canaries:
// each pair succeeds with the figures that apply to it and none that do
// not, passes its checks, answers /probe, and the page stays lint-clean
// within the series budget.
func TestEveryAPIWithCanaries(t *testing.T) {
	srv, _ := testkit.StartSim(t, func(c *sim.Config) { c.PrefillBase, c.DecodeBase = 5*time.Millisecond, 2*time.Millisecond })
	tei, _ := testkit.StartSim(t, func(c *sim.Config) {
		c.Engine, c.PrefillBase, c.DecodeBase = sim.EngineTEI, 5*time.Millisecond, 2*time.Millisecond
	})
	cfg := fmt.Sprintf(`targets:
  - {name: chat, url: %[1]q}
  - {name: completions, url: %[1]q, api: completions}
  - {name: responses, url: %[1]q, api: responses}
  - {name: messages, url: %[1]q, api: messages}
  - {name: embeddings, url: %[1]q, api: embeddings}
  - {name: rerank, url: %[1]q, api: rerank}
  - {name: tei-rerank, url: %[2]q, api: rerank}
  - {name: transcriptions, url: %[1]q, api: transcriptions}
scenarios:
  - {name: speech, audio: {seconds: 2}, slo: {ttft: 5s, tpot: 1s, e2e: 10s}}
  - {name: speech-whole, audio: {seconds: 2}, stream: false, slo: {e2e: 10s}}
  - {name: clips, audio: {dataset: %[5]q, max_wer: 0.2}, slo: {e2e: 10s, quality_ratio: 0.9}}
  - name: stream
    prompt_tokens: 16
    output_tokens: 6
    slo: {ttft: 5s, tpot: 1s, e2e: 10s}
    quality: {regex: '\w'}
  - name: whole
    prompt_tokens: 16
    output_tokens: 6
    stream: false
    slo: {e2e: 10s}
    quality: {regex: '\w'}
  - name: vision
    prompt_tokens: 16
    output_tokens: 6
    images: {count: 2, width: 64, height: 48}
    slo: {ttft: 5s, e2e: 10s}
  - name: vectors
    prompt_tokens: 16
    inputs: 3
    slo: {e2e: 5s}
  - name: ranked
    prompt_tokens: 8
    documents: 4
    document_tokens: 12
    slo: {e2e: 5s}
  - {name: tools, prompt_tokens: 16, output_tokens: 32, slo: {ttft: 5s, e2e: 10s}, %[3]s, tool_choice: required}
  - {name: shaped, prompt_tokens: 16, output_tokens: 32, slo: {ttft: 5s, e2e: 10s}, %[4]s}
  - {name: whole-tools, prompt_tokens: 16, output_tokens: 32, stream: false, slo: {e2e: 10s}, %[3]s, tool_choice: required}
limits: {max_canary_memory: 1GiB}
canary:
  interval: 300ms
  probes:
    - {targets: [chat, completions, responses, messages], scenarios: [stream, whole]}
    - {targets: [chat], scenarios: [vision]}
    - {targets: [embeddings], scenarios: [vectors]}
    - {targets: [rerank, tei-rerank], scenarios: [ranked]}
    - {targets: [chat, responses], scenarios: [tools, shaped, whole-tools], interval: 1s}
    - {targets: [messages], scenarios: [tools, whole-tools], interval: 1s}
    - {targets: [transcriptions], scenarios: [speech, speech-whole, clips]}
`, srv.URL, tei.URL, testkit.WeatherTool, testkit.PersonFormat, testkit.AudioDataset(t))
	pairs := []apiPair{
		{"chat", "stream", true, true, true}, {"completions", "stream", true, true, true}, {"responses", "stream", true, true, true},
		{"chat", "whole", true, false, true}, {"completions", "whole", true, false, true}, {"responses", "whole", true, false, true},
		{"messages", "stream", true, true, true}, {"messages", "whole", true, false, true}, {"messages", "tools", true, true, true}, {"messages", "whole-tools", true, false, true},
		{"chat", "vision", true, true, false},
		{"embeddings", "vectors", false, false, false}, {"rerank", "ranked", false, false, false}, {"tei-rerank", "ranked", false, false, false},
		{"chat", "tools", true, true, true}, {"responses", "tools", true, true, true}, {"chat", "shaped", true, true, true}, {"responses", "shaped", true, true, true},
		{"chat", "whole-tools", true, false, true}, {"responses", "whole-tools", true, false, true},
		{"transcriptions", "speech", true, true, false}, {"transcriptions", "speech-whole", true, false, false}, {"transcriptions", "clips", true, true, true},
	}
	path := testkit.ConfigFile(t, cfg)
	d := startDaemon(t, Options{ConfigFile: path, StoragePath: t.TempDir(), HistoryRecent: 5, HistoryFailures: 5})

	const want = 3
	var fams []*dto.MetricFamily
	testkit.WaitUntil(t, fmt.Sprintf("%d successes of every pair", want), 30*time.Second, func() bool {
		fams = scrapeFamilies(t, d.routes())
		for _, p := range pairs {
			if counterOf(fams, "llmprobe_requests_total", p, "outcome", "success") < want {
				return false
			}
		}
		return true
	})
	for _, p := range pairs {
		t.Run(p.target+"/"+p.scenario, func(t *testing.T) { checkAPIPair(t, d, fams, p) })
		// Every answer of the tools scenario is a call: each has its first
		// tool-call delta (but one the scrape caught half recorded).
		if calls, n := histogramCount(fams, "llmprobe_time_to_first_tool_call_seconds", p), counterOf(fams, "llmprobe_requests_total", p, "outcome", "success"); (p.scenario == "tools") != (calls > 0) || calls > 0 && float64(calls) < n-1 {
			t.Errorf("%s/%s: %d first tool-call deltas of %v successes", p.target, p.scenario, calls, n)
		}
		// Transcriptions count their audio; clips with a reference their
		// words, all heard right.
		if audio := counterOf(fams, "llmprobe_audio_seconds_total", p, "", ""); (p.target == "transcriptions") != (audio > 0) {
			t.Errorf("%s/%s: %g audio seconds", p.target, p.scenario, audio)
		}
		words, errs := counterOf(fams, "llmprobe_transcript_reference_words_total", p, "", ""), counterOf(fams, "llmprobe_transcript_word_errors_total", p, "", "")
		if (p.scenario == "clips") != (words > 0) || errs != 0 {
			t.Errorf("%s/%s: %g word errors in %g reference words", p.target, p.scenario, errs, words)
		}
	}

	code, page := d.get("/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	testkit.PromtoolCheckMetrics(t, page)
	if c := countSeries(scrapeFamilies(t, d.routes()), false); float64(c.total) > 120*float64(len(pairs)) {
		t.Errorf("%d series for %d pairs: past the budget of 120 per pair", c.total, len(pairs))
	}
	if _, landing := d.get("/"); !strings.Contains(landing, fmt.Sprintf("(%d dimensions)", sim.EmbeddingDimension)) {
		t.Errorf("the landing page does not show the embeddings target's dimension")
	}
}

// checkAPIPair checks one pair's series on the page and its /probe.
func checkAPIPair(t *testing.T, d *running, fams []*dto.MetricFamily, p apiPair) {
	for _, outcome := range []string{"rejected", "http_error", "timeout", "connection_error", "stream_error"} {
		if n := counterOf(fams, "llmprobe_requests_total", p, "outcome", outcome); n != 0 {
			t.Errorf("%v %s requests", n, outcome)
		}
	}
	if n := counterOf(fams, "llmprobe_quality_checks_total", p, "result", "failed"); n != 0 {
		t.Errorf("%v failed quality checks", n)
	}
	if passed := counterOf(fams, "llmprobe_quality_checks_total", p, "result", "passed"); p.checked != (passed > 0) {
		t.Errorf("%v passed quality checks; want some: %v", passed, p.checked)
	}
	if sources := pairMetrics(fams, "llmprobe_token_count_source_total", p); p.tokens != (len(sources) > 0) {
		t.Errorf("%d token count sources; the answers have tokens: %v", len(sources), p.tokens)
	}
	if n := histogramCount(fams, "llmprobe_request_duration_seconds", p); n == 0 {
		t.Error("no e2e sample")
	}
	for _, h := range []string{"llmprobe_time_to_first_token_seconds", "llmprobe_time_per_output_token_seconds", "llmprobe_inter_token_latency_seconds"} {
		if n := histogramCount(fams, h, p); p.tokenTimes != (n > 0) {
			t.Errorf("%s has %d samples; token times apply: %v", h, n, p.tokenTimes)
		}
	}
	code, body := d.get("/probe?target=" + p.target + "&scenario=" + p.scenario)
	if code != http.StatusOK || !strings.Contains(body, "\nprobe_success 1\n") || !strings.Contains(body, "\nllmprobe_probe_good 1\n") {
		t.Errorf("/probe: %d\n%s", code, body)
	}
	if passed := strings.Contains(body, "\nllmprobe_probe_answer_check_passed 1\n"); passed != p.checked {
		t.Errorf("/probe says the answer passed its checks: %v, want %v", passed, p.checked)
	}
	if has := strings.Contains(body, "llmprobe_probe_time_to_first_token_seconds"); has != p.tokenTimes {
		t.Errorf("/probe answers a TTFT: %v, want %v", has, p.tokenTimes)
	}
}

// counterOf is the value of a pair's counter whose label is value (all of
// it for label ""); 0 when it has none.
func counterOf(fams []*dto.MetricFamily, name string, p apiPair, label, value string) float64 {
	var sum float64
	for _, m := range pairMetrics(fams, name, p) {
		if label == "" { // a family without labels of its own
			sum += m.GetCounter().GetValue()
		}
		for _, l := range m.GetLabel() {
			if l.GetName() == label && l.GetValue() == value {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

func histogramCount(fams []*dto.MetricFamily, name string, p apiPair) uint64 {
	var n uint64
	for _, m := range pairMetrics(fams, name, p) {
		n += m.GetHistogram().GetSampleCount()
	}
	return n
}

// pairMetrics are the canary series of family name for pair p.
func pairMetrics(fams []*dto.MetricFamily, name string, p apiPair) []*dto.Metric {
	var out []*dto.Metric
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["target"] == p.target && labels["scenario"] == p.scenario && labels["traffic"] == "canary" {
				out = append(out, m)
			}
		}
	}
	return out
}
