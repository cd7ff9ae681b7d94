package prober

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	promconfig "github.com/prometheus/common/config"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prompt"
	"github.com/llmprobe/llmprobe/sim"
)

// unstreamed is testkit's scenario with stream: false.
func unstreamed() config.Scenario {
	s := testkit.Scenario()
	off := false
	s.Stream = &off
	return s
}

// Unstreamed answers of the three APIs against the sim: e2e counts to the
// body's end (past the sim's 50 ms prefill, with the first token, and five 10 ms decode steps), the
// token counts and the reasoning split come from the usage, and TTFT, ITL,
// TPOT and the longest gap are unset: n/a, never a measured 0.
func TestUnstreamedAgainstSim(t *testing.T) {
	for api, prompt := range map[config.API]int{config.APIChat: 20, config.APICompletions: 16, config.APIResponses: 20} {
		t.Run(string(api), func(t *testing.T) {
			// A sim of its own, idle when the request arrives, so its steps'
			// deadlines start at this request's admission and the body
			// cannot end before 100 ms. One shared by the three subtests
			// once ended a body at 98 ms on a loaded machine: a request
			// admitted while the engine still runs a step chains its
			// deadlines to that step's, up to the timer's lateness sooner.
			srv, _ := testkit.StartSim(t, func(c *sim.Config) { c.Faults.ReasoningTokens = 2 })
			res := probeOnce(t, testkit.Target(srv.URL, api), unstreamed())
			if res.Outcome != OutcomeSuccess || !res.Unstreamed {
				t.Fatalf("%s %s (unstreamed %v)\n%s", res.Outcome, res.Error, res.Unstreamed, logOf(res))
			}
			if res.E2E < 100*time.Millisecond || res.Timings.TTFB <= 0 {
				t.Errorf("e2e %s, first byte %s; want e2e past the sim's 100 ms and a first byte", res.E2E, res.Timings.TTFB)
			}
			if res.OutputTokens != 6 || res.TokenSource != TokensFromUsage || res.PromptTokensReported != prompt {
				t.Errorf("%d output tokens from %q, %d prompt tokens; want 6 from usage and %d", res.OutputTokens, res.TokenSource, res.PromptTokensReported, prompt)
			}
			if res.FirstTokenSeen() || res.TTFT != 0 || res.TPOT != 0 || res.ITL != nil || res.MaxGap != 0 || res.TTFTAnswer != 0 || res.TTFTParts != nil {
				t.Errorf("ttft %s, tpot %s, %d ITL samples, gap %s, answer at %s, split %v: an unstreamed answer has none", res.TTFT, res.TPOT, len(res.ITL), res.MaxGap, res.TTFTAnswer, res.TTFTParts)
			}
			if api != config.APICompletions && (res.ReasoningTokens != 2 || res.AnswerTokens != 4 || res.ReasoningSource != TokensFromUsage) {
				t.Errorf("reasoning %d + answer %d from %q, want 2 + 4 from usage", res.ReasoningTokens, res.AnswerTokens, res.ReasoningSource)
			}
			if res.Answer == "" || !strings.Contains(logOf(res), "unstreamed (TTFT, ITL, TPOT: n/a)") || !strings.Contains(logOf(res), "stream: false") {
				t.Errorf("answer %q; log:\n%s", res.Answer, logOf(res))
			}
		})
	}
}

// Without usage, an unstreamed answer's output tokens are estimated from
// its text, and say so: never a count the server did not give passed off
// as its own.
func TestUnstreamedWithoutUsage(t *testing.T) {
	srv, _ := testkit.StartSim(t, func(c *sim.Config) { c.Faults.UsagePlacement = sim.UsageNone; c.Answer = "one two three four five six" })
	res := probeOnce(t, testkit.Target(srv.URL, config.APIChat), unstreamed())
	// Six words of text: ⌈6 × 1.3⌉ by prompt.EstimateTokens.
	if res.Outcome != OutcomeSuccess || res.OutputTokens != prompt.EstimateTokens(res.Answer) || res.OutputTokens != 8 || res.TokenSource != TokensFromText {
		t.Fatalf("%s %s: %d tokens from %q for %q\n%s", res.Outcome, res.Error, res.OutputTokens, res.TokenSource, res.Answer, logOf(res))
	}
	if res.PromptTokensReported != 0 || !strings.Contains(logOf(res), "estimated from the answer's text") {
		t.Errorf("prompt tokens %d; log:\n%s", res.PromptTokensReported, logOf(res))
	}
}

// An unstreamed answer's text is checked by the scenario's quality check,
// and a conversation's next turn sends it back.
func TestUnstreamedQualityAndHistory(t *testing.T) {
	target, bodies := recordBodies(t, config.APIChat)
	s := conversationScenario(2)
	off := false
	s.Stream, s.Quality = &off, &config.Quality{Contains: "thanks"}
	c := newClient(t, target)
	var results []*Result
	first := Request{Scenario: s, Traffic: TrafficCanary, Sched: time.Now()}
	Converse(context.Background(), first, prompt.NewBuilder(s, prompt.Source{}, 1).Session(3), func(r Request) *Result { return c.Do(context.Background(), r) }, func(r *Result) { results = append(results, r) })
	if len(results) != 2 || results[0].Quality == nil || !results[0].Quality.Passed || !results[1].Good {
		t.Fatalf("%d results: %+v", len(results), results)
	}
	msgs := bodies()[1]["messages"].([]any)
	if got := msgs[1].(map[string]any)["content"]; got != results[0].Answer || !strings.Contains(results[0].Answer, "fine thanks") {
		t.Errorf("turn 2 sent back %q; the answer was %q", got, results[0].Answer)
	}
}

// jsonServer answers every request with status 200, Content-Type ct and body.
func jsonServer(t *testing.T, ct, body string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ct)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Hostile unstreamed answers: each fails with its outcome, phase and
// bounded reason, and says why; an answer that is only tool calls, or cut
// at max_output_tokens, is no failure.
func TestUnstreamedHostile(t *testing.T) {
	const js = "application/json"
	usage := `"usage":{"prompt_tokens":16,"completion_tokens":6}`
	cases := []struct {
		name, ct, body string
		api            config.API
		want           Outcome
		phase, reason  string
		errHas         string
	}{
		{"not JSON", js, "<html>gateway</html>", config.APIChat, OutcomeStreamError, phaseStream, reasonAnswerNotJSON, "not JSON"},
		{"no choices", js, `{"choices":[],` + usage + `}`, config.APIChat, OutcomeStreamError, phaseStream, reasonAnswerNoChoices, "no choices"},
		{"empty content", js, `{"choices":[{"message":{"role":"assistant","content":""},"finish_reason":"stop"}],` + usage + `}`, config.APIChat, OutcomeStreamError, phaseStream, reasonNoOutput, `no content, reasoning or tool call (finish_reason "stop")`},
		{"null content", js, `{"choices":[{"message":{"role":"assistant","content":null}}]}`, config.APIChat, OutcomeStreamError, phaseStream, reasonNoOutput, "no content"},
		{"event stream asked for none", "text/event-stream", `data: {"choices":[{"delta":{"content":"hi"}}]}` + "\n\n", config.APIChat, OutcomeStreamError, "headers", reasonUnaskedStream, "stream: false"},
		{"event stream as JSON", js, `data: {"choices":[{"text":"hi"}]}` + "\n\ndata: [DONE]\n\n", config.APICompletions, OutcomeStreamError, phaseStream, reasonUnaskedStream, "stream: false"},
		{"error in a 200", js, `{"error":{"message":"KV cache exhausted"}}`, config.APIChat, OutcomeStreamError, phaseStream, reasonErrorInAnswer, "KV cache exhausted"},
		{"past max_tokens", js, `{"choices":[{"text":"a b c"}],"usage":{"prompt_tokens":16,"completion_tokens":900}}`, config.APICompletions, OutcomeStreamError, phaseStream, reasonMaxTokens, "900 completion tokens for max_tokens 6"},
		{"too large", js, `{"choices":[{"text":"` + strings.Repeat("x", int(WholeLimit(6))) + `"}]}`, config.APICompletions, OutcomeStreamError, phaseStream, reasonAnswerTooLarge, "bytes, the bound"},
		{"response failed", js, `{"status":"failed","output":[],"error":{"code":"server_error","message":"out of memory"}}`, config.APIResponses, OutcomeStreamError, phaseStream, reasonErrorInAnswer, "server_error: out of memory"},
		{"response incomplete for another reason", js, `{"status":"incomplete","output":[],"incomplete_details":{"reason":"server_shutdown"}}`, config.APIResponses, OutcomeStreamError, phaseStream, reasonErrorInAnswer, `reason "server_shutdown"`},
		{"response filtered before any output", js, `{"status":"incomplete","output":[],"incomplete_details":{"reason":"content_filter"}}`, config.APIResponses, OutcomeStreamError, phaseStream, reasonNoOutput, `finish_reason "incomplete (content_filter)"`},
		{"response in progress", js, `{"status":"in_progress","output":[]}`, config.APIResponses, OutcomeStreamError, phaseStream, reasonErrorInAnswer, `status "in_progress"`},
		{"no response object", js, `{"id":"x"}`, config.APIResponses, OutcomeStreamError, phaseStream, reasonAnswerNoChoices, "no status"},
		{"response with no output", js, `{"status":"completed","output":[]}`, config.APIResponses, OutcomeStreamError, phaseStream, reasonNoOutput, "no content"},
		{"response incomplete at max_output_tokens", js, `{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[{"type":"message","content":[{"type":"output_text","text":"cut"}]}],"usage":{"input_tokens":16,"output_tokens":6}}`, config.APIResponses, OutcomeSuccess, "", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := probeOnce(t, testkit.Target(jsonServer(t, tc.ct, tc.body), tc.api), unstreamed())
			checkFailure(t, res, tc.want, tc.phase, tc.reason, tc.errHas)
			if tc.want == OutcomeSuccess && (res.OutputTokens != 6 || res.FinishReason != "incomplete (max_output_tokens)" || res.Answer != "cut") {
				t.Errorf("%d tokens, finish %q, answer %q", res.OutputTokens, res.FinishReason, res.Answer)
			}
		})
	}
}

// Tool calls of an unstreamed answer, in chat's message.tool_calls and the
// Responses API's function_call items, fill Result.ToolCalls; an answer of
// tool calls alone succeeded. A secret the server echoes in the arguments
// is masked.
func TestUnstreamedToolCalls(t *testing.T) {
	chat := `{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},{"id":"c2","type":"function","function":{"name":"echo","arguments":"{\"key\":\"sk-bearer-9876543210\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":16,"completion_tokens":5}}`
	responses := `{"status":"completed","output":[{"type":"reasoning","content":[{"type":"reasoning_text","text":"think"}]},{"type":"function_call","call_id":"c1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},{"type":"function_call","name":"echo","arguments":"{\"key\":\"sk-bearer-9876543210\"}"}],"usage":{"input_tokens":16,"output_tokens":5,"output_tokens_details":{"reasoning_tokens":1}}}`
	for api, body := range map[config.API]string{config.APIChat: chat, config.APIResponses: responses} {
		target := testkit.Target(jsonServer(t, "application/json", body), api)
		target.HTTPClientConfig.Authorization = &promconfig.Authorization{Type: "Bearer", Credentials: "sk-bearer-9876543210"}
		res := probeOnce(t, target, unstreamed())
		if res.Outcome != OutcomeSuccess || len(res.ToolCalls) != 2 {
			t.Fatalf("%s: %s %s, tool calls %v\n%s", api, res.Outcome, res.Error, res.ToolCalls, logOf(res))
		}
		if tc := res.ToolCalls[0]; tc.Name != "get_weather" || tc.Arguments != `{"city":"Paris"}` {
			t.Errorf("%s: first call %+v", api, tc)
		}
		if args := res.ToolCalls[1].Arguments; args != `{"key":"<secret>"}` {
			t.Errorf("%s: the echoed secret was kept: %s", api, args)
		}
	}
}

// An unstreamed answer whose body does not come by the deadline is a
// timeout in the stream phase; one cut short is a stream_cut.
func TestUnstreamedDeadlineAndCut(t *testing.T) {
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"choices":[{"message":{"content":"hel`)
		w.(http.Flusher).Flush()
		drainAndWait(r)
	}))
	defer hang.Close()
	target := testkit.Target(hang.URL, config.APIChat)
	target.Timeout = config.Duration(300 * time.Millisecond)
	res := probeOnce(t, target, unstreamed())
	checkFailure(t, res, OutcomeTimeout, phaseStream, "deadline", "deadline after")

	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "500")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"choices":[{"message":{"content":"hel`)
	}))
	defer cut.Close()
	res = probeOnce(t, testkit.Target(cut.URL, config.APIChat), unstreamed())
	checkFailure(t, res, OutcomeStreamError, phaseStream, reasonStreamCut, "unexpected EOF")
}
