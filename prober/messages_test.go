package prober

import (
	"encoding/json"
	"fmt"
	"io"
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

// messagesServer answers every request with the Messages API events given,
// each its type and the rest of its JSON object, gap apart; seen gets each
// request's headers and body.
func messagesServer(t *testing.T, gap time.Duration, seen chan<- *http.Request, events ...string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if seen != nil {
			r.Body = io.NopCloser(strings.NewReader(string(body)))
			seen <- r
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range events {
			time.Sleep(gap)
			typ := ev
			if i := strings.IndexByte(ev, ','); i >= 0 {
				typ = ev[:i]
			}
			fmt.Fprintf(w, "event: %s\ndata: {\"type\":%q%s}\n\n", typ, typ, strings.TrimPrefix(ev, typ))
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

const (
	msgStart  = `message_start,"message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","usage":{"input_tokens":20,"output_tokens":1}}`
	msgPing   = `ping`
	msgStop   = `message_stop`
	msgThink  = `content_block_start,"index":0,"content_block":{"type":"thinking","thinking":""}`
	msgText   = `content_block_start,"index":1,"content_block":{"type":"text","text":""}`
	msgTool   = `content_block_start,"index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}`
	msgBlockX = `content_block_stop,"index":0`
)

func msgDelta(index int, kind, field, text string) string {
	b, _ := json.Marshal(text)
	return fmt.Sprintf(`content_block_delta,"index":%d,"delta":{"type":%q,%q:%s}`, index, kind, field, b)
}

func msgEnd(stop string, output int) string {
	return fmt.Sprintf(`message_delta,"delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}`, stop, output)
}

// A Messages API stream with thinking, text and a tool call: TTFT at the
// first thinking delta (the ping and the text blocks' starts are no tokens;
// a tool_use block's start, which names the call, is one, as chat's), the
// reasoning split from the kinds of delta, the call assembled from its
// input_json pieces and checked against its schema, N from message_delta's
// usage, the prompt from message_start's.
func TestMessagesStream(t *testing.T) {
	const gap = 25 * time.Millisecond
	srv := messagesServer(t, gap, nil, msgStart, msgPing, msgThink,
		msgDelta(0, "thinking_delta", "thinking", "hmm"), msgDelta(0, "thinking_delta", "thinking", " ok"), msgBlockX,
		msgText, msgDelta(1, "text_delta", "text", "Let me"), msgDelta(1, "text_delta", "text", " check."),
		msgTool, msgDelta(2, "input_json_delta", "partial_json", `{"city": "Paris",`), msgDelta(2, "input_json_delta", "partial_json", ` "unit": "celsius"}`),
		msgEnd("tool_use", 7), msgStop)
	res := probeOnce(t, testkit.Target(srv.URL, config.APIMessages), toolScenario(t, nil))
	if res.Outcome != OutcomeSuccess || !res.Good {
		t.Fatalf("%s good %v %s\n%s", res.Outcome, res.Good, res.Error, logOf(res))
	}
	// The first thinking delta is the fourth event: after four gaps.
	if res.TTFT < 4*gap || res.TTFT >= 5*gap || res.TTFTReasoning != res.TTFT || res.TTFTAnswer <= res.TTFT {
		t.Errorf("TTFT %s (reasoning %s, answer %s): want the first thinking delta, in [%s, %s)", res.TTFT, res.TTFTReasoning, res.TTFTAnswer, 4*gap, 5*gap)
	}
	if res.OutputTokens != 7 || res.TokenSource != TokensFromUsage || res.OutputChunks != 7 || res.PromptTokensReported != 20 || res.TokenMismatch != "" {
		t.Errorf("%d output tokens from %s in %d chunks (mismatch %q), prompt %d; want 7 from usage in 7, prompt 20", res.OutputTokens, res.TokenSource, res.OutputChunks, res.TokenMismatch, res.PromptTokensReported)
	}
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].Name != "get_weather" || res.ToolCalls[0].Arguments != `{"city": "Paris", "unit": "celsius"}` {
		t.Errorf("tool calls %+v", res.ToolCalls)
	}
	if res.FinishReason != "tool_use" || res.ResponseModel != "m" || res.TTFTool <= res.TTFTAnswer {
		t.Errorf("finish %q, model %q, first tool delta %s after the answer's %s", res.FinishReason, res.ResponseModel, res.TTFTool, res.TTFTAnswer)
	}
}

// An api: messages target against the sim, streamed and not: thinking then
// text blocks give TTFT, ITL and TPOT; the counts come from usage, the
// reasoning split from the kinds of block; the prompt from message_start
// (16 words, the chat template's 4 tokens).
func TestMessagesAgainstSim(t *testing.T) {
	srv, _ := testkit.StartSim(t, func(c *sim.Config) { c.Faults.ReasoningTokens = 4 })
	for _, streamed := range []bool{true, false} {
		s := testkit.Scenario()
		s.OutputTokens = config.Distribution{Kind: config.DistFixed, Value: 12}
		if !streamed {
			s.Stream = new(bool)
		}
		res := probeOnce(t, testkit.Target(srv.URL, config.APIMessages), validated(t, s))
		if res.Outcome != OutcomeSuccess || !res.Good {
			t.Fatalf("streamed %v: %s %s\n%s", streamed, res.Outcome, res.Error, logOf(res))
		}
		if res.OutputTokens != 12 || res.TokenSource != TokensFromUsage || res.PromptTokensReported != 20 || res.FinishReason != "max_tokens" || res.ResponseModel != "m" {
			t.Errorf("streamed %v: %d output tokens from %q, prompt %d, finish %q, model %q", streamed, res.OutputTokens, res.TokenSource, res.PromptTokensReported, res.FinishReason, res.ResponseModel)
		}
		if !streamed {
			if !res.Unstreamed || res.TTFT != 0 || !strings.Contains(res.Answer, " ") {
				t.Errorf("unstreamed: ttft %s, answer %q", res.TTFT, res.Answer)
			}
			continue
		}
		if res.OutputChunks != 12 || res.ReasoningTokens != 4 || res.AnswerTokens != 8 {
			t.Errorf("%d chunks, reasoning %d + answer %d: want 12, 4 + 8", res.OutputChunks, res.ReasoningTokens, res.AnswerTokens)
		}
		if res.TTFT <= 0 || res.TTFTReasoning != res.TTFT || res.TTFTAnswer <= res.TTFT || res.E2E <= res.TTFT || res.TPOT <= 0 || len(res.ITL) != 11 {
			t.Errorf("ttft %s (reasoning %s, answer %s), e2e %s, tpot %s, %d ITL samples", res.TTFT, res.TTFTReasoning, res.TTFTAnswer, res.E2E, res.TPOT, len(res.ITL))
		}
	}
}

// The request: /v1/messages with anthropic-version, max_tokens, the
// conversation's system line as system, the tools in the Messages API's
// shape; a target whose http_headers set anthropic-version sends only its own.
func TestMessagesRequest(t *testing.T) {
	seen := make(chan *http.Request, 2)
	srv := messagesServer(t, 0, seen, msgStart, msgText, msgDelta(1, "text_delta", "text", "hi"), msgEnd("end_turn", 1), msgStop)
	s := toolScenario(t, "required")
	c := newClient(t, testkit.Target(srv.URL, config.APIMessages))
	p, maxTokens := prompt.NewBuilder(s, prompt.Source{}, 1).Next()
	p.History = []prompt.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "hello"}, {Role: "assistant", Content: "hi"}}
	res := c.Do(t.Context(), Request{Scenario: s, Prompt: p, MaxTokens: maxTokens, Sched: time.Now()})
	r := <-seen
	var body map[string]any
	b, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatal(err)
	}
	if r.URL.Path != "/v1/messages" || r.Header.Values("Anthropic-Version")[0] != anthropicVersion || len(r.Header.Values("Anthropic-Version")) != 1 {
		t.Errorf("%s with anthropic-version %v", r.URL.Path, r.Header.Values("Anthropic-Version"))
	}
	msgs, _ := body["messages"].([]any)
	tools, _ := body["tools"].([]any)
	tool, _ := tools[0].(map[string]any)
	if body["system"] != "Be brief." || len(msgs) != 3 || body["max_tokens"] != float64(maxTokens) || body["stream"] != true ||
		tool["name"] != "get_weather" || tool["input_schema"] == nil || tool["function"] != nil {
		t.Errorf("body %s", b)
	}
	if choice, _ := body["tool_choice"].(map[string]any); choice["type"] != "any" {
		t.Errorf("tool_choice required as %v, want {type: any}", body["tool_choice"])
	}
	// A required tool call that did not come: the check fails, the request succeeded.
	if res.Outcome != OutcomeSuccess || res.Good {
		t.Errorf("%s good %v: want a success that is not good (no tool call under required)", res.Outcome, res.Good)
	}

	target := testkit.Target(srv.URL, config.APIMessages)
	target.HTTPClientConfig.HTTPHeaders = &promconfig.Headers{Headers: map[string]promconfig.Header{"anthropic-version": {Values: []string{"2025-01-01"}}}}
	probeOnce(t, target, testkit.Scenario())
	if got := (<-seen).Header.Values("Anthropic-Version"); len(got) != 1 || got[0] != "2025-01-01" {
		t.Errorf("configured anthropic-version: sent %v, want [2025-01-01]", got)
	}
}

// Hostile Messages API answers, each with its outcome and reason: no
// message_stop, an error event, a tool input that is not JSON, usage that
// contradicts the deltas, a refusal (a success that is not good).
func TestMessagesHostile(t *testing.T) {
	text := func(s string) string { return msgDelta(1, "text_delta", "text", s) }
	for _, tc := range []struct {
		name    string
		events  []string
		tools   bool
		outcome Outcome
		reason  string // the failure's reason, or the failed check's start
		check   func(*Result) string
	}{
		{"no message_stop", []string{msgStart, msgText, text("a"), text("b"), msgEnd("end_turn", 2)}, false, OutcomeStreamError, reasonNoFinish, nil},
		{"error event", []string{msgStart, msgText, text("a"), `error,"error":{"type":"overloaded_error","message":"Overloaded"}`}, false, OutcomeStreamError, reasonErrorInStream, func(r *Result) string {
			if !strings.Contains(r.Error, "error event: overloaded_error: Overloaded") {
				return r.Error
			}
			return ""
		}},
		{"tool input not JSON", []string{msgStart, msgTool, msgDelta(2, "input_json_delta", "partial_json", `{"city": Paris`), msgEnd("tool_use", 3), msgStop}, true, OutcomeSuccess, "tool call get_weather: arguments are not JSON: ", nil},
		{"usage below the deltas", []string{msgStart, msgText, text("a"), text("b"), text("c"), msgEnd("end_turn", 1), msgStop}, false, OutcomeSuccess, "", func(r *Result) string {
			if r.TokenMismatch == "" {
				return "no token mismatch for usage 1 after 3 deltas"
			}
			return ""
		}},
		{"refusal", []string{msgStart, msgText, text("I can't help with that."), msgEnd("refusal", 6), msgStop}, false, OutcomeSuccess, "the model refused", nil},
		// message_start's output_tokens 1 is no count: without message_delta's
		// usage, the deltas are, marked so, and nothing contradicts them.
		{"no usage in message_delta", []string{msgStart, msgText, text("a"), text("b"), text("c"), `message_delta,"delta":{"stop_reason":"end_turn"}`, msgStop}, false, OutcomeSuccess, "", func(r *Result) string {
			if r.OutputTokens != 3 || r.TokenSource != TokensFromChunks || r.TokenMismatch != "" || r.PromptTokensReported != 20 {
				return fmt.Sprintf("%d tokens from %s, mismatch %q, prompt %d; want 3 from chunks, none, 20", r.OutputTokens, r.TokenSource, r.TokenMismatch, r.PromptTokensReported)
			}
			return ""
		}},
		// A call of a function without parameters: its name is the token.
		{"a call without input", []string{msgStart, `content_block_start,"index":0,"content_block":{"type":"tool_use","id":"toolu_2","name":"ping","input":{}}`, msgEnd("tool_use", 1), msgStop}, false, OutcomeSuccess, "", func(r *Result) string {
			if len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "ping" || r.OutputChunks != 1 {
				return fmt.Sprintf("calls %+v in %d chunks; want ping in 1", r.ToolCalls, r.OutputChunks)
			}
			return ""
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := messagesServer(t, 0, nil, tc.events...)
			s := testkit.Scenario()
			if tc.tools {
				s = toolScenario(t, "required")
			}
			res := probeOnce(t, testkit.Target(srv.URL, config.APIMessages), s)
			switch {
			case res.Outcome != tc.outcome:
				t.Errorf("outcome %s (%s), want %s\n%s", res.Outcome, res.FailureText(), tc.outcome, logOf(res))
			case tc.outcome != OutcomeSuccess && res.Reason != tc.reason:
				t.Errorf("reason %s, want %s: %s", res.Reason, tc.reason, res.Error)
			case tc.outcome == OutcomeSuccess && tc.reason != "" && (res.Good || res.Quality == nil || !strings.HasPrefix(res.Quality.Reason, tc.reason)):
				t.Errorf("good %v, quality %+v; want a failed check %q", res.Good, res.Quality, tc.reason)
			}
			if tc.check != nil {
				if msg := tc.check(res); msg != "" {
					t.Error(msg)
				}
			}
		})
	}
}

// llama.cpp's unstreamed Messages API answer: the text, the stop reason,
// N from usage and the prompt with its cache-read tokens.
func TestMessagesUnstreamedTranscript(t *testing.T) {
	tr := loadTranscript(t, "llamacpp-messages-unstreamed.http")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, strings.Join(tr.events, ""))
	}))
	t.Cleanup(srv.Close)
	s := testkit.Scenario()
	s.Stream = new(bool)
	res := probeOnce(t, testkit.Target(srv.URL, config.APIMessages), validated(t, s))
	if res.Outcome != OutcomeSuccess || !res.Unstreamed {
		t.Fatalf("%s %s\n%s", res.Outcome, res.FailureText(), logOf(res))
	}
	if res.OutputTokens != 6 || res.TokenSource != TokensFromUsage || res.PromptTokensReported != 14 || res.FinishReason != "max_tokens" || res.ResponseModel != "small-llama.gguf" {
		t.Errorf("%d tokens from %s, prompt %d, finish %q, model %q", res.OutputTokens, res.TokenSource, res.PromptTokensReported, res.FinishReason, res.ResponseModel)
	}
	if cached, ok := res.CachedPromptTokens, res.CachedReported; !ok || cached != 13 {
		t.Errorf("cached prompt tokens %d (reported %v), want 13", cached, ok)
	}
}
