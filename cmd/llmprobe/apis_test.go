package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/sim"
)

// gateAPI is one burst of TestGateEveryAPI: a target and scenario in YAML,
// and what its report must hold.
type gateAPI struct {
	name, target, scenario string
	tokens                 bool     // output tokens, counted from usage
	tokenTimes             bool     // TTFT, TPOT and ITL samples
	say                    []string // in the gate's text
}

// A burst per API through llmprobe gate against the sim: each passes, its
// report has the figures that apply (e2e always; TTFT, TPOT and ITL for
// streamed token answers; output tokens from usage where answers have
// tokens) and n/a for the rest.
func TestGateEveryAPI(t *testing.T) {
	srv, _ := simServer(t)
	tei, _ := testkit.StartSim(t, func(c *sim.Config) { c.Engine, c.Model = sim.EngineTEI, "sim-model" })
	streamed := `{name: s, prompt_tokens: 16, output_tokens: 4, slo: {ttft: 2s, e2e: 5s, target_ratio: 0.9}}`
	for _, tc := range []gateAPI{
		{"chat", `{name: t, url: %q}`, streamed, true, true, nil},
		{"completions", `{name: t, url: %q, api: completions}`, streamed, true, true, nil},
		{"responses", `{name: t, url: %q, api: responses}`, streamed, true, true, nil},
		{"messages", `{name: t, url: %q, api: messages}`, streamed, true, true, nil},
		{"embeddings", `{name: t, url: %q, api: embeddings}`, `{name: s, prompt_tokens: 16, inputs: 4, slo: {e2e: 5s, target_ratio: 0.9}}`, false, false, []string{"inputs/s, n/a output tok/s"}},
		{"rerank", `{name: t, url: %q, api: rerank}`, `{name: s, prompt_tokens: 8, documents: 5, slo: {e2e: 5s, target_ratio: 0.9}}`, false, false, []string{"inputs/s, n/a output tok/s"}},
		{"tei-rerank", `{name: t, url: "` + tei.URL + `", api: rerank}`, `{name: s, prompt_tokens: 8, documents: 5, slo: {e2e: 5s, target_ratio: 0.9}}`, false, false, []string{"engine tei 0.1.0"}},
		{"transcriptions", `{name: t, url: %q, api: transcriptions}`, `{name: s, audio: {seconds: 1}, slo: {ttft: 2s, e2e: 5s, target_ratio: 0.9}}`, true, true,
			[]string{"audio: 40.0s transcribed by 40 requests, RTFx ", "WER n/a (no clip with a reference transcript)"}},
	} {
		t.Run(tc.name, func(t *testing.T) { gateOneAPI(t, srv.URL, tc) })
	}
}

func gateOneAPI(t *testing.T, url string, tc gateAPI) {
	target := tc.target
	if strings.Contains(target, "%q") {
		target = fmt.Sprintf(target, url)
	}
	cfg := writeTemp(t, tc.name+".yml", fmt.Sprintf(`targets: [%s]
scenarios: [%s]
bursts:
  - name: b
    target: t
    scenarios: [{scenario: s}]
    arrival: {rate: 20}
    requests: 40
`, target, tc.scenario))
	rep, out, file := gateReport(t, cfg, "b")
	for _, s := range tc.say {
		if !strings.Contains(out, s) {
			t.Errorf("the gate's text does not say %q:\n%s", s, out)
		}
	}
	if rep.Outcomes[prober.OutcomeSuccess] != 40 || !rep.Passed {
		t.Errorf("outcomes %v, passed %v: want 40 successes", rep.Outcomes, rep.Passed)
	}
	if s := rep.Latency["e2e"]; s.Count != 40 || s.P50 <= 0 {
		t.Errorf("e2e: %d samples, p50 %g", s.Count, s.P50)
	}
	for _, m := range []string{"ttft", "tpot", "itl"} {
		if n := rep.Latency[m].Count; tc.tokenTimes != (n > 0) {
			t.Errorf("%s: %d samples; token times apply: %v", m, n, tc.tokenTimes)
		}
	}
	if got := rep.TokenSources[prober.TokensFromUsage]; tc.tokens != (got == 40) || (!tc.tokens && len(rep.TokenSources) > 0) {
		t.Errorf("token sources %v; the answers have tokens: %v", rep.TokenSources, tc.tokens)
	}
	if tc.tokens != (rep.Throughput.OutputTokens != nil) {
		t.Errorf("output tok/s %v; the answers have tokens: %v", rep.Throughput.OutputTokens, tc.tokens)
	}
	// Embeddings and rerank answers count their inputs, on the page too.
	if pooled := !tc.tokens; pooled != (rep.Throughput.Inputs != nil) {
		t.Errorf("inputs/s %v; pooled: %v", rep.Throughput.Inputs, pooled)
	}
	if out, err := exec.Command(binPath, "report", "show", file).CombinedOutput(); err != nil {
		t.Fatalf("report show: %v\n%s", err, out)
	}
	page, err := os.ReadFile(strings.TrimSuffix(file, ".json") + ".html")
	for _, s := range []string{"inputs/s", "output tok/s n/a (the answers have no tokens)", "n/a: no request had a first token to split"} {
		if err != nil || tc.tokens == strings.Contains(string(page), s) {
			t.Errorf("the report page (%v) says %q: %v; the answers have tokens: %v", err, s, strings.Contains(string(page), s), tc.tokens)
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

// The Messages API through the gate and compare: a gate on the sim passes
// its TPOT objective and fails it on a sim twice as slow to decode; compare
// of a messages candidate whose decode is 40 % slower says TPOT worse.
func TestMessagesGateAndCompare(t *testing.T) {
	slow := decodeSim(t, 6)
	cfg := writeTemp(t, "messages.yml", fmt.Sprintf(`targets:
  - {name: stable, url: %q, api: messages}
  - {name: next, url: %q, api: messages}
scenarios:
  - {name: chat, prompt_tokens: 32, output_tokens: 16, slo: {tpot: 80ms, target_ratio: 0.9}}
bursts:
  - {name: release, target: stable, scenarios: [{scenario: chat}], arrival: {process: poisson, rate: 20}, requests: 60, warmup: {requests: 3}, seed: 9}
`, decodeSim(t, 3), decodeSim(t, 3*1.4)))
	rep, _, _ := gateReport(t, cfg, "release")
	if rep.Latency["tpot"].Count != 60 || rep.TokenSources[prober.TokensFromUsage] != 60 {
		t.Errorf("tpot samples %d, token sources %v", rep.Latency["tpot"].Count, rep.TokenSources)
	}
	out, err := exec.Command(binPath, "gate", "--config.file="+cfg, "--burst=release", "--target.url="+slow, "--storage.path=").CombinedOutput()
	if exitCode(err) != 1 || !strings.Contains(string(out), "slo_tpot") {
		t.Errorf("gate on a sim twice as slow: exit %d, want 1 on slo_tpot\n%s", exitCode(err), out)
	}
	out, err = exec.Command(binPath, "compare", "--config.file="+cfg, "--burst=release", "--baseline=stable", "--candidate=next", "--rounds=2").CombinedOutput()
	if exitCode(err) != 1 || !strings.Contains(string(out), "TPOT p50 +") {
		t.Errorf("compare with a 40 %% slower messages candidate: exit %d, want 1 naming TPOT\n%s", exitCode(err), out)
	}
}

// Transcriptions through the gate and compare: a gate of clips with
// reference transcripts passes its TPOT and word-error objectives on the
// sim, fails slo_tpot on a sim twice as slow to decode and slo_quality on
// one that mishears a third of the words; compare of a candidate whose
// decode is twice as slow says worse (at 40 % slower, two rounds of
// transcripts of their clips' own lengths were not enough evidence).
func TestTranscriptionsGateAndCompare(t *testing.T) {
	cfg := writeTemp(t, "transcriptions.yml", fmt.Sprintf(`targets:
  - {name: stable, url: %q, api: transcriptions}
  - {name: next, url: %q, api: transcriptions}
scenarios:
  - {name: clips, audio: {dataset: %q, max_wer: 0.2}, slo: {tpot: 80ms, target_ratio: 0.9, quality_ratio: 0.9}}
bursts:
  - {name: release, target: stable, scenarios: [{scenario: clips}], arrival: {process: poisson, rate: 20}, requests: 60, warmup: {requests: 3}, seed: 9}
`, decodeSim(t, 3), decodeSim(t, 3*2), testkit.AudioDataset(t)))
	rep, out, _ := gateReport(t, cfg, "release")
	if tr := rep.Transcription; tr == nil || tr.Requests != 60 || tr.WER == nil || *tr.WER != 0 || tr.RTFx == nil || *tr.RTFx <= 1 {
		t.Errorf("transcription figures %+v", rep.Transcription)
	}
	if !strings.Contains(out, "WER 0.0% (0 errors in ") || rep.Latency["tpot"].Count != 60 || rep.TokenSources[prober.TokensFromUsage] != 60 {
		t.Errorf("tpot samples %d, token sources %v; the gate says:\n%s", rep.Latency["tpot"].Count, rep.TokenSources, out)
	}
	slow, mishears := decodeSim(t, 6), serveSim(t, func(c *sim.Config) { slowerDecode(c, 3); c.TranscriptWordErrorRate = 0.34 })
	b, err := exec.Command(binPath, "gate", "--config.file="+cfg, "--burst=release", "--target.url="+slow, "--storage.path=").CombinedOutput()
	if exitCode(err) != 1 || !strings.Contains(string(b), "slo_tpot") {
		t.Errorf("gate on a sim twice as slow: exit %d, want 1 on slo_tpot\n%s", exitCode(err), b)
	}
	b, err = exec.Command(binPath, "gate", "--config.file="+cfg, "--burst=release", "--target.url="+mishears, "--storage.path=").CombinedOutput()
	if exitCode(err) != 1 || !strings.Contains(string(b), "slo_quality") || !strings.Contains(string(b), "past max_wer 0.2") {
		t.Errorf("gate on a sim that mishears: exit %d, want 1 on slo_quality naming max_wer\n%s", exitCode(err), b)
	}
	// Each clip's transcript has its own length, so per-token figures
	// spread more between rounds than chat's: the verdict may rest on e2e.
	b, err = exec.Command(binPath, "compare", "--config.file="+cfg, "--burst=release", "--baseline=stable", "--candidate=next", "--rounds=2").CombinedOutput()
	if exitCode(err) != 1 || !strings.Contains(string(b), "candidate next vs baseline stable: worse: ") {
		t.Errorf("compare with a transcriptions candidate twice as slow: exit %d, want 1 and worse\n%s", exitCode(err), b)
	}
}

// Compare pairs a base model with its LoRA adapter on one engine: two
// targets at one URL whose models are the base and the adapter. The sim's
// adapter costs 60 ms more to prefill; compare says TTFT worse.
func TestCompareBaseAgainstAdapter(t *testing.T) {
	url := serveSim(t, func(c *sim.Config) { c.Adapters, c.AdapterPrefill = []string{"sql-lora"}, 60*time.Millisecond })
	cfg := writeTemp(t, "lora.yml", fmt.Sprintf(`targets:
  - {name: base, url: %[1]q, model: %[2]q}
  - {name: adapter, url: %[1]q, model: sql-lora}
scenarios:
  - {name: chat, prompt_tokens: 32, output_tokens: 8, slo: {ttft: 1s, target_ratio: 0.9}}
bursts:
  - {name: release, target: base, scenarios: [{scenario: chat}], arrival: {process: poisson, rate: 10}, requests: 40, seed: 9}
`, url, sim.DefaultConfig().Model))
	out, err := exec.Command(binPath, "compare", "--config.file="+cfg, "--burst=release", "--baseline=base", "--candidate=adapter", "--rounds=2").CombinedOutput()
	if exitCode(err) != 1 || !strings.Contains(string(out), "TTFT p50 +") {
		t.Errorf("compare of the base and a slower adapter: exit %d, want 1 naming TTFT\n%s", exitCode(err), out)
	}
}
