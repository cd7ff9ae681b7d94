package prober

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/sim"
)

// An api: responses target against the sim: the request is the Responses
// API's, the typed events give TTFT, ITL and TPOT, and the token counts come
// from response.completed's usage, reasoning split included.
func TestResponsesAgainstSim(t *testing.T) {
	srv, _ := testkit.StartSim(t, func(c *sim.Config) { c.Faults.ReasoningTokens = 4 })
	s := testkit.Scenario()
	s.OutputTokens = config.Distribution{Kind: config.DistFixed, Value: 12}
	res := probeOnce(t, testkit.Target(srv.URL, config.APIResponses), s)
	if res.Outcome != OutcomeSuccess {
		t.Fatalf("%s %s\n%s", res.Outcome, res.Error, logOf(res))
	}
	if res.OutputTokens != 12 || res.TokenSource != TokensFromUsage || res.OutputChunks != 12 {
		t.Errorf("%d output tokens from %q in %d chunks, want 12 from usage in 12", res.OutputTokens, res.TokenSource, res.OutputChunks)
	}
	// 16 prompt words and the sim's chat template's 4 tokens.
	if res.PromptTokensReported != 20 {
		t.Errorf("prompt tokens reported %d, want 20", res.PromptTokensReported)
	}
	if res.ReasoningTokens != 4 || res.AnswerTokens != 8 || res.ReasoningSource != TokensFromUsage {
		t.Errorf("reasoning %d + answer %d from %q, want 4 + 8 from usage", res.ReasoningTokens, res.AnswerTokens, res.ReasoningSource)
	}
	if res.TTFT <= 0 || res.TTFTReasoning != res.TTFT || res.TTFTAnswer <= res.TTFT || res.E2E <= res.TTFT || res.TPOT <= 0 || len(res.ITL) != 11 {
		t.Errorf("ttft %s (reasoning %s, answer %s), e2e %s, tpot %s, %d ITL samples: want ordered figures and 11 ITL samples",
			res.TTFT, res.TTFTReasoning, res.TTFTAnswer, res.E2E, res.TPOT, len(res.ITL))
	}
	if !strings.Contains(logOf(res), "/v1/responses") || res.FinishReason != "completed" {
		t.Errorf("finish %q; log:\n%s", res.FinishReason, logOf(res))
	}
}

// The body of a Responses API request: input and max_output_tokens, the
// target's extra_body beneath, no chat fields; a conversation's later turn
// sends its messages as input.
func TestResponsesRequestBody(t *testing.T) {
	bodies := make(chan map[string]any, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &body); err != nil || r.URL.Path != "/v1/responses" {
			t.Errorf("%s: %v: %s", r.URL.Path, err, b)
		}
		bodies <- body
		responsesStream(w, 2, completedEvent(2))
	}))
	defer srv.Close()
	target := testkit.Target(srv.URL, config.APIResponses)
	target.ExtraBody = map[string]any{"reasoning": map[string]any{"effort": "low"}, "max_output_tokens": 1}
	res := probeOnce(t, target, testkit.Scenario())
	if res.Outcome != OutcomeSuccess {
		t.Fatalf("%s %s\n%s", res.Outcome, res.Error, logOf(res))
	}
	body := <-bodies
	input, _ := body["input"].(string)
	if len(strings.Fields(input)) < 10 || body["max_output_tokens"] != 6.0 || body["stream"] != true || body["model"] != "m" || body["reasoning"] == nil {
		t.Errorf("body %v: want input as a string, max_output_tokens 6 over extra_body's, stream, model and extra_body's reasoning", body)
	}
	for _, chat := range []string{"messages", "max_tokens", "stream_options", "prompt"} {
		if _, ok := body[chat]; ok {
			t.Errorf("body has chat's %q: %v", chat, body)
		}
	}
}

// responsesStream writes n output text deltas, then last (raw events).
func responsesStream(w http.ResponseWriter, n int, last string) {
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"status\":\"in_progress\"}}\n\n")
	for i := range n {
		fmt.Fprintf(w, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\" w%d\",\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0}\n\n", i)
		w.(http.Flusher).Flush()
	}
	fmt.Fprint(w, last)
}

func completedEvent(tokens int) string {
	return fmt.Sprintf("event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"usage\":{\"input_tokens\":16,\"output_tokens\":%d,\"total_tokens\":%d}}}\n\n", tokens, 16+tokens)
}

// Hostile Responses API servers: each failure the server reports keeps its
// message, and a stream that never completes is a stream_error.
func TestResponsesFailures(t *testing.T) {
	cases := []struct {
		name          string
		n             int
		last          string
		want          Outcome
		phase, reason string
		errHas        string
	}{
		{"no response.completed", 3, "", OutcomeStreamError, phaseStream, reasonNoFinish, "without response.completed"},
		{"[DONE] is no completion", 3, "data: [DONE]\n\n", OutcomeStreamError, phaseStream, reasonMalformed, "malformed event"},
		{"response.failed", 2, `event: response.failed` + "\n" + `data: {"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"the engine ran out of KV cache"}}}` + "\n\n",
			OutcomeStreamError, phaseStream, reasonErrorInStream, "response.failed event: server_error: the engine ran out of KV cache"},
		{"error event", 1, `event: error` + "\n" + `data: {"type":"error","code":"rate_limit_exceeded","message":"slow down","param":null,"sequence_number":3}` + "\n\n",
			OutcomeStreamError, phaseStream, reasonErrorInStream, "error event: rate_limit_exceeded: slow down"},
		{"response.incomplete for a reason it does not name", 2, `event: response.incomplete` + "\n" + `data: {"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"server_shutdown"}}}` + "\n\n",
			OutcomeStreamError, phaseStream, reasonErrorInStream, `response.incomplete event: reason "server_shutdown"`},
		{"response.completed without its response", 2, `event: response.completed` + "\n" + `data: {"type":"response.completed"}` + "\n\n",
			OutcomeStreamError, phaseStream, reasonMalformed, "without its response"},
		{"no output delta", 0, completedEvent(0), OutcomeStreamError, phaseStream, reasonNoOutput, "without an output token"},
		{"usage beyond max_output_tokens", 6, completedEvent(9000), OutcomeStreamError, phaseStream, reasonMaxTokens, "9000 completion tokens for max_tokens 6"},
		// OpenAI ends a response cut at max_output_tokens so: the length asked for.
		{"response.incomplete at max_output_tokens", 6, `event: response.incomplete` + "\n" + `data: {"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":16,"output_tokens":6}}}` + "\n\n",
			OutcomeSuccess, "", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { responsesStream(w, tc.n, tc.last) }))
			defer srv.Close()
			res := probeOnce(t, testkit.Target(srv.URL, config.APIResponses), testkit.Scenario())
			checkFailure(t, res, tc.want, tc.phase, tc.reason, tc.errHas)
			if tc.want == OutcomeSuccess && (res.OutputTokens != 6 || res.TokenSource != TokensFromUsage || res.FinishReason != "incomplete (max_output_tokens)") {
				t.Errorf("%d tokens from %q, finish %q", res.OutputTokens, res.TokenSource, res.FinishReason)
			}
		})
	}
}

// A conversation on the Responses API: the first turn's input is a string,
// a later turn's the whole history as messages, the server's answer in it.
func TestResponsesConversation(t *testing.T) {
	target, bodies := recordBodies(t, config.APIResponses)
	results := converse(t, target, 2)
	if results[1].Outcome != OutcomeSuccess {
		t.Fatalf("turn 2: %s %s", results[1].Outcome, results[1].Error)
	}
	got := bodies()
	if _, ok := got[0]["input"].(string); !ok {
		t.Errorf("turn 1 input %v, want a string", got[0]["input"])
	}
	var roles []string
	answer := ""
	for _, m := range got[1]["input"].([]any) {
		msg := m.(map[string]any)
		roles = append(roles, msg["role"].(string))
		if msg["role"] == "assistant" {
			answer = msg["content"].(string)
		}
	}
	if strings.Join(roles, ",") != "user,assistant,user" || answer != results[0].Answer || !strings.Contains(answer, "fine") {
		t.Errorf("turn 2 sent roles %v and answer %q; the server answered %q", roles, answer, results[0].Answer)
	}
	if results[1].PromptTokensReported <= results[0].PromptTokensReported {
		t.Errorf("prompt tokens %d then %d: the history does not grow", results[0].PromptTokensReported, results[1].PromptTokensReported)
	}
}

// llama.cpp's unstreamed Responses API answer: N and the prompt from
// usage; llama.cpp sends its own timings only beside a stream's
// response.completed, so this answer has no engine timings.
func TestResponsesUnstreamedTranscript(t *testing.T) {
	tr := loadTranscript(t, "llamacpp-responses-unstreamed.http")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, strings.Join(tr.events, ""))
	}))
	t.Cleanup(srv.Close)
	s := testkit.Scenario()
	s.Stream = new(bool)
	res := probeOnce(t, testkit.Target(srv.URL, config.APIResponses), s)
	if res.Outcome != OutcomeSuccess || !res.Unstreamed {
		t.Fatalf("%s %s\n%s", res.Outcome, res.FailureText(), logOf(res))
	}
	if res.OutputTokens != 6 || res.TokenSource != TokensFromUsage || res.PromptTokensReported != 18 || res.Engine != nil || res.TTFTParts != nil {
		t.Errorf("%d tokens from %s, prompt %d, engine %+v, split %v", res.OutputTokens, res.TokenSource, res.PromptTokensReported, res.Engine, res.TTFTParts)
	}
}
