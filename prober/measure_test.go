package prober

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
)

type step struct {
	after time.Duration // pause before writing data
	data  string        // one SSE data payload
}

// scripted serves a stream of data events at scripted times.
func scripted(t *testing.T, steps []step) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for _, s := range steps {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(s.after):
			}
			fmt.Fprintf(w, "data: %s\n\n", s.data)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func chatDelta(delta string) string {
	return `{"choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}`
}

func chatContentUsage(content string, completion int) string {
	return fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}],"usage":{"prompt_tokens":10,"completion_tokens":%d,"total_tokens":%d}}`, content, completion, 10+completion)
}

const (
	finishChunk = `{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`
	done        = `[DONE]`
)

func usageChunk(completion int) string {
	return fmt.Sprintf(`{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":%d,"total_tokens":%d}}`, completion, 10+completion)
}

// scenarioFor asks for maxTokens output tokens.
func scenarioFor(maxTokens int) config.Scenario {
	s := testkit.Scenario()
	s.OutputTokens = config.Distribution{Kind: config.DistFixed, Value: maxTokens}
	return s
}

func within(got, want, tol time.Duration) bool { return got >= want-tol && got <= want+tol }

// Engines that send k tokens per chunk: ITL is per token, so a 40 ms gap over
// 4 tokens is four samples of 10 ms, not one of 40 ms.
func TestITLPerTokenWithRunningUsage(t *testing.T) {
	steps := []step{{50 * time.Millisecond, chatDelta(`{"role":"assistant","content":""}`)}}
	steps = append(steps, step{0, chatContentUsage("a", 1)})
	for i := 1; i <= 3; i++ {
		steps = append(steps, step{40 * time.Millisecond, chatContentUsage(" b c d e", 1+4*i)})
	}
	steps = append(steps, step{0, finishChunk}, step{0, usageChunk(13)}, step{0, done})
	res := probeOnce(t, testkit.Target(scripted(t, steps).URL, config.APIChat), scenarioFor(16))
	if res.Outcome != OutcomeSuccess {
		t.Fatalf("%s: %s", res.Outcome, res.Error)
	}
	if res.OutputTokens != 13 || res.TokenSource != TokensFromUsage {
		t.Fatalf("tokens = %d from %s, want 13 from usage", res.OutputTokens, res.TokenSource)
	}
	if len(res.ITL) != 12 {
		t.Fatalf("ITL samples = %d, want 12 (one per token after the first)", len(res.ITL))
	}
	for i, d := range res.ITL {
		if !within(d, 10*time.Millisecond, 5*time.Millisecond) {
			t.Errorf("ITL[%d] = %s, want ~10ms", i, d)
		}
	}
	if !within(res.MaxGap, 40*time.Millisecond, 15*time.Millisecond) {
		t.Errorf("max gap = %s, want ~40ms (a stall is a real silence, not per token)", res.MaxGap)
	}
}

// Without running usage, the final count is spread over the later chunks.
func TestITLPerTokenFromFinalUsage(t *testing.T) {
	steps := []step{{20 * time.Millisecond, chatDelta(`{"content":"a"}`)}}
	for range 3 {
		steps = append(steps, step{30 * time.Millisecond, chatDelta(`{"content":" b c d"}`)})
	}
	steps = append(steps, step{0, finishChunk}, step{0, usageChunk(10)}, step{0, done})
	res := probeOnce(t, testkit.Target(scripted(t, steps).URL, config.APIChat), scenarioFor(16))
	if res.OutputTokens != 10 || len(res.ITL) != 9 {
		t.Fatalf("tokens = %d, ITL samples = %d; want 10 and 9", res.OutputTokens, len(res.ITL))
	}
	for i, d := range res.ITL {
		if !within(d, 10*time.Millisecond, 5*time.Millisecond) {
			t.Errorf("ITL[%d] = %s, want ~10ms", i, d)
		}
	}
}

// No usage at all: count chunks, and say so.
func TestChunkCountFallbackIsFlagged(t *testing.T) {
	steps := []step{{0, chatDelta(`{"content":"a"}`)}, {0, chatDelta(`{"content":"b"}`)}, {0, chatDelta(`{"content":"c"}`)}, {0, finishChunk}, {0, done}}
	res := probeOnce(t, testkit.Target(scripted(t, steps).URL, config.APIChat), testkit.Scenario())
	if res.Outcome != OutcomeSuccess || res.OutputTokens != 3 || res.TokenSource != TokensFromChunks {
		t.Fatalf("outcome %s, tokens %d from %s; want success, 3 from chunks", res.Outcome, res.OutputTokens, res.TokenSource)
	}
	if !strings.Contains(logOf(res), "counted from chunks") {
		t.Errorf("fallback not logged:\n%s", logOf(res))
	}
}

// Reasoning and tool-call deltas are output tokens; role-only, empty and
// usage-only chunks are not.
func TestOutputTokenDefinition(t *testing.T) {
	cases := []struct {
		name  string
		first string
	}{
		{"reasoning_content", chatDelta(`{"reasoning_content":"hmm"}`)},
		{"reasoning", chatDelta(`{"reasoning":"hmm"}`)},
		{"tool_calls", chatDelta(`{"tool_calls":[{"index":0,"function":{"name":"f","arguments":""}}]}`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			steps := []step{
				{0, chatDelta(`{"role":"assistant"}`)},
				{0, chatDelta(`{"content":""}`)},
				{0, `{"choices":[],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}`},
				{60 * time.Millisecond, tc.first},
				{20 * time.Millisecond, chatDelta(`{"content":"x"}`)},
				{0, finishChunk}, {0, usageChunk(2)}, {0, done},
			}
			res := probeOnce(t, testkit.Target(scripted(t, steps).URL, config.APIChat), testkit.Scenario())
			if res.OutputChunks != 2 {
				t.Fatalf("output chunks = %d, want 2", res.OutputChunks)
			}
			if res.TTFT < 60*time.Millisecond || res.TTFT > 75*time.Millisecond {
				t.Errorf("TTFT = %s: the first token must be the %s delta at ~60ms", res.TTFT, tc.name)
			}
		})
	}
}

func TestTPOTAndSLOChecks(t *testing.T) {
	steps := []step{{30 * time.Millisecond, chatContentUsage("a", 1)}}
	for i := 2; i <= 5; i++ {
		steps = append(steps, step{20 * time.Millisecond, chatContentUsage("b", i)})
	}
	steps = append(steps, step{0, finishChunk}, step{0, done})
	s := testkit.Scenario()
	s.SLO = config.SLO{
		TTFT:        config.Duration(10 * time.Millisecond), // missed: TTFT is ~30ms
		TPOT:        config.Duration(40 * time.Millisecond), // met: ~20ms
		Stall:       config.Duration(60 * time.Millisecond), // met
		TargetRatio: 0.99,
	}
	res := probeOnce(t, testkit.Target(scripted(t, steps).URL, config.APIChat), s)
	if !within(res.TPOT, 20*time.Millisecond, 8*time.Millisecond) {
		t.Errorf("TPOT = %s, want ~20ms", res.TPOT)
	}
	want := map[string]bool{config.ObjectiveTTFT: false, config.ObjectiveTPOT: true, config.ObjectiveStall: true}
	if len(res.Checks) != len(want) {
		t.Fatalf("checks = %+v", res.Checks)
	}
	for _, c := range res.Checks {
		if c.Met != want[c.Objective] {
			t.Errorf("%s met=%v, want %v", c.Objective, c.Met, want[c.Objective])
		}
	}
	if res.Good {
		t.Error("good despite a missed TTFT objective")
	}
}

func TestQualityChecks(t *testing.T) {
	answer := func(text string) []step {
		return []step{{0, chatDelta(fmt.Sprintf(`{"content":%q}`, text))}, {0, finishChunk}, {0, done}}
	}
	cases := []struct {
		q      config.Quality
		answer string
		pass   bool
	}{
		{config.Quality{Contains: "Paris"}, "The capital is Paris.", true},
		{config.Quality{Contains: "Paris"}, "The capital is Lyon.", false},
		{config.Quality{JSON: true}, ` {"ok": true} `, true},
		{config.Quality{JSON: true}, `{"ok": tru`, false},
	}
	for i, tc := range cases {
		s := testkit.Scenario()
		q := tc.q
		s.Quality = &q
		res := probeOnce(t, testkit.Target(scripted(t, answer(tc.answer)).URL, config.APIChat), s)
		if res.Quality == nil || res.Quality.Passed != tc.pass || res.Good != tc.pass {
			t.Errorf("case %d: quality %+v good %v, want pass=%v", i, res.Quality, res.Good, tc.pass)
		}
	}
	cfg, err := config.Parse([]byte("targets: [{name: a, url: 'http://x:1'}]\nscenarios: [{name: s, quality: {regex: '^\\d+$'}}]\n"), "inline")
	if err != nil {
		t.Fatal(err)
	}
	res := probeOnce(t, testkit.Target(scripted(t, answer("42")).URL, config.APIChat), cfg.Scenarios[0])
	if res.Quality == nil || !res.Quality.Passed {
		t.Errorf("regex check on %q: %+v", "42", res.Quality)
	}
}
