package prober

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
)

// Real engines' framings: the prober must find the first output token and
// take the token count from usage exactly as the engine reported it.
func TestTranscripts(t *testing.T) {
	const gap = 30 * time.Millisecond
	cases := []struct {
		file             string
		api              config.API
		firstOutputEvent int // 0-based event index carrying the first output token
		outputTokens     int
		promptTokens     int
		chunks           int
	}{
		// usage rides on the finish_reason chunk; a timings object too.
		{"llamacpp-completions-usage.sse", config.APICompletions, 0, 6, 6, 6},
		{"llamacpp-completions-nousage.sse", config.APICompletions, 0, 6, 6, 6},
		// role-only first chunk with "content": null must not be the first token.
		{"llamacpp-chat-usage.sse", config.APIChat, 1, 6, 16, 6},
		// zeroed usage on every chunk, then the real one with empty choices.
		{"ollama-completions-usage.sse", config.APICompletions, 0, 6, 20, 6},
		// every delta repeats the role next to content: the first chunk is output.
		{"ollama-chat-usage.sse", config.APIChat, 0, 6, 16, 6},
		// synthetic, in vLLM's framing: reasoning_content deltas are output tokens.
		{"vllm-chat-reasoning.sse", config.APIChat, 1, 6, 12, 6},
		// synthetic, in vLLM's Responses framing: typed events, the first
		// output is the first reasoning_text delta after four opening events.
		{"vllm-responses-reasoning.sse", config.APIResponses, 4, 6, 12, 6},
		// llama.cpp's Messages API: message_start (input 1 + cache read 13),
		// an empty text block's start, five text deltas (one of two tokens),
		// message_delta's usage of six.
		{"llamacpp-messages-stream.sse", config.APIMessages, 2, 6, 14, 5},
		// llama.cpp's Responses API: usage on response.completed.
		{"llamacpp-responses-usage.sse", config.APIResponses, 4, 6, 14, 5},
		// Ollama's Messages API: message_start says 3 input tokens,
		// message_delta the real 18 with the output's 6; two text deltas.
		{"ollama-messages-stream.sse", config.APIMessages, 2, 6, 18, 2},
		// Ollama's Responses API: four text deltas, usage on
		// response.completed.
		{"ollama-responses-usage.sse", config.APIResponses, 4, 6, 18, 4},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			srv := replay(t, loadTranscript(t, tc.file), gap)
			res := probeOnce(t, testkit.Target(srv.URL, tc.api), testkit.Scenario())
			if res.Outcome != OutcomeSuccess {
				t.Fatalf("outcome %s: %s\n%s", res.Outcome, res.Error, logOf(res))
			}
			if res.OutputTokens != tc.outputTokens || res.TokenSource != TokensFromUsage {
				t.Errorf("output tokens = %d from %s, want %d from usage", res.OutputTokens, res.TokenSource, tc.outputTokens)
			}
			if res.PromptTokensReported != tc.promptTokens {
				t.Errorf("reported prompt tokens = %d, want %d", res.PromptTokensReported, tc.promptTokens)
			}
			if res.OutputChunks != tc.chunks {
				t.Errorf("output chunks = %d, want %d", res.OutputChunks, tc.chunks)
			}
			// Event i arrives after (i+1) gaps; TTFT must fall in that event's window.
			lo := time.Duration(tc.firstOutputEvent+1) * gap
			if res.TTFT < lo || res.TTFT >= lo+gap {
				t.Errorf("TTFT = %s, want within [%s, %s): the first token was taken from the wrong event", res.TTFT, lo, lo+gap)
			}
			if len(res.ITL) != tc.outputTokens-1 {
				t.Errorf("ITL samples = %d, want %d", len(res.ITL), tc.outputTokens-1)
			}
		})
	}
}

// A reasoning model's stream in vLLM's framing (testdata/vllm-chat-reasoning.sse
// is synthetic: no vLLM capture with reasoning_content is at hand): role-only
// chunk, three reasoning_content deltas, three content deltas, finish, usage.
// vLLM's usage has no reasoning count, so the split comes from the chunks;
// the same stream with the count in OpenAI's or SGLang's usage shape takes it
// from there.
func TestReasoningTranscript(t *testing.T) {
	const gap = 30 * time.Millisecond
	base := loadTranscript(t, "vllm-chat-reasoning.sse")
	usageEvent := len(base.events) - 2
	for _, tc := range []struct {
		name, usage       string // replaces the usage object's closing brace
		reasoning, answer int
		source            TokenSource
	}{
		{"vllm", "}", 3, 3, TokensFromChunks},
		{"openai details", `,"completion_tokens_details":{"reasoning_tokens":4}}`, 4, 2, TokensFromUsage},
		{"sglang top-level", `,"reasoning_tokens":4}`, 4, 2, TokensFromUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := base
			tr.events = slices.Clone(base.events)
			tr.events[usageEvent] = strings.Replace(tr.events[usageEvent], `"completion_tokens":6}`, `"completion_tokens":6`+tc.usage, 1)
			srv := replay(t, tr, gap)
			s := testkit.Scenario()
			s.SLO.TTFTAnswer = config.Duration(time.Hour)
			res := probeOnce(t, testkit.Target(srv.URL, config.APIChat), s)
			if res.Outcome != OutcomeSuccess {
				t.Fatalf("outcome %s: %s\n%s", res.Outcome, res.Error, logOf(res))
			}
			if res.ReasoningTokens != tc.reasoning || res.AnswerTokens != tc.answer || res.ReasoningSource != tc.source || !res.Reasoned() {
				t.Errorf("reasoning %d, answer %d from %q; want %d, %d from %q", res.ReasoningTokens, res.AnswerTokens, res.ReasoningSource, tc.reasoning, tc.answer, tc.source)
			}
			// Event i arrives after (i+1) gaps: reasoning starts at event 1, the answer at event 4.
			for _, c := range []struct {
				name  string
				got   time.Duration
				event int
			}{{"first token", res.TTFT, 1}, {"first reasoning token", res.TTFTReasoning, 1}, {"first answer token", res.TTFTAnswer, 4}} {
				lo := time.Duration(c.event+1) * gap
				if c.got < lo || c.got >= lo+gap {
					t.Errorf("%s at %s, want within [%s, %s)", c.name, c.got, lo, lo+gap)
				}
			}
			if res.Answer != "Hello! How" {
				t.Errorf("answer %q: reasoning must not be part of it", res.Answer)
			}
			if len(res.Checks) != 1 || res.Checks[0].Objective != config.ObjectiveTTFTAnswer || !res.Checks[0].Met {
				t.Errorf("checks %+v: want ttft_answer met", res.Checks)
			}
		})
	}
}

// A real capture (testdata/gpustack-qwen3-chat-reasoning.sse, see its .source):
// qwen3 on GPUStack's llama.cpp backend, role chunk with "content": null, 66
// reasoning_content deltas, 8 content deltas, a finish chunk, a usage chunk with
// empty choices and no reasoning count, [DONE]. usage says 79 tokens, 5 more than
// the chunks carry (tokens the parser sent no delta for, presumably the think
// tags), so the split is the chunks' and N is usage's.
func TestRealReasoningTranscript(t *testing.T) {
	const gap = 2 * time.Millisecond
	tr := loadTranscript(t, "gpustack-qwen3-chat-reasoning.sse")
	if len(tr.events) != 78 {
		t.Fatalf("%d events, want 78: the capture was not read whole", len(tr.events))
	}
	srv := replay(t, tr, gap)
	s := testkit.Scenario()
	s.OutputTokens = config.Distribution{Kind: config.DistFixed, Value: 128}
	s.SLO.TTFTAnswer = config.Duration(time.Hour)
	res := probeOnce(t, testkit.Target(srv.URL, config.APIChat), s)
	if res.Outcome != OutcomeSuccess {
		t.Fatalf("outcome %s: %s\n%s", res.Outcome, res.Error, logOf(res))
	}
	if res.OutputTokens != 79 || res.TokenSource != TokensFromUsage || res.PromptTokensReported != 21 {
		t.Errorf("output tokens %d from %s, prompt %d; want 79 from usage, prompt 21", res.OutputTokens, res.TokenSource, res.PromptTokensReported)
	}
	if res.ReasoningTokens != 66 || res.AnswerTokens != 8 || res.ReasoningSource != TokensFromChunks || !res.Reasoned() {
		t.Errorf("reasoning %d, answer %d from %q; want 66, 8 from chunks", res.ReasoningTokens, res.AnswerTokens, res.ReasoningSource)
	}
	// Event i is written after i+1 gaps and cannot be read sooner, however busy
	// the machine: the first reasoning token (event 1) is at least 2 gaps in,
	// the first answer token (event 67) at least 68. An answer token taken from
	// a reasoning event would come about 66 gaps early.
	if res.TTFT != res.TTFTReasoning || res.TTFTReasoning < 2*gap {
		t.Errorf("TTFT %s, first reasoning token %s: want equal and at least %s", res.TTFT, res.TTFTReasoning, 2*gap)
	}
	if !(res.TTFTReasoning < res.TTFTAnswer) || res.TTFTAnswer < 68*gap {
		t.Errorf("first answer token at %s (first reasoning token at %s): want later, and at least %s", res.TTFTAnswer, res.TTFTReasoning, 68*gap)
	}
	if res.Answer != "5 + 3 = 8." {
		t.Errorf("answer %q, want %q: reasoning must not be part of it", res.Answer, "5 + 3 = 8.")
	}
	if len(res.Checks) != 1 || res.Checks[0].Objective != config.ObjectiveTTFTAnswer || !res.Checks[0].Met {
		t.Errorf("checks %+v: want ttft_answer met", res.Checks)
	}
}

// serveHTTPTranscripts answers each path with a captured raw response and
// every other path with 404, as the engine did.
func serveHTTPTranscripts(t *testing.T, files map[string]string) *httptest.Server {
	t.Helper()
	responses := map[string]*http.Response{}
	bodies := map[string][]byte{}
	for path, file := range files {
		raw, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		responses[path], bodies[path] = resp, body
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, ok := responses[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		for k, vs := range resp.Header {
			if k != "Content-Length" {
				w.Header()[k] = vs
			}
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(bodies[r.URL.Path])
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Real engines' /v1/models and version answers name the engine, its version
// and the model, as target_info shows them.
func TestTargetInfoTranscripts(t *testing.T) {
	cases := []struct {
		name                   string
		files                  map[string]string
		engine, version, model string
	}{
		// llama.cpp: owned_by and the Server header say so; /version is a 404 and the header carries no build.
		{"llamacpp", map[string]string{"/v1/models": "llamacpp-models.http"}, "llamacpp", "", "tiny"},
		// Ollama: owned_by "library", the version from /api/version.
		{"ollama", map[string]string{"/v1/models": "ollama-models.http", "/api/version": "ollama-version.http"}, "ollama", "0.0.0", "tiny:latest"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			target := testkit.Target(serveHTTPTranscripts(t, tc.files).URL, config.APIChat)
			target.Model = ""
			c := newClient(t, target)
			info := c.RefreshInfo(t.Context())
			if info.Engine != tc.engine || info.EngineVersion != tc.version || c.Model() != tc.model || info.ModelsError != "" {
				t.Errorf("info = %+v, model %q; want engine %s %q, model %s", info, c.Model(), tc.engine, tc.version, tc.model)
			}
		})
	}
}

// A target that stops answering keeps the engine and version it last
// confirmed, with the reason beside them.
func TestTargetInfoKeptWhileDown(t *testing.T) {
	srv, _ := testkit.StartSim(t, nil)
	c := newClient(t, testkit.Target(srv.URL, config.APIChat))
	up := c.RefreshInfo(t.Context())
	srv.Close()
	down := c.RefreshInfo(t.Context())
	if down.Engine != "llmprobe-sim" || down.EngineVersion != up.EngineVersion || !down.Confirmed.Equal(up.Confirmed) || !strings.Contains(down.ModelsError, "connection refused") {
		t.Errorf("after the target went down: %+v (before: %+v)", down, up)
	}
}

// llama.cpp's Responses API puts its own timings beside response.completed's
// response: they split the request's TTFT as its chat chunks' do.
func TestLlamaCPPResponsesTimings(t *testing.T) {
	srv := replay(t, loadTranscript(t, "llamacpp-responses-usage.sse"), 5*time.Millisecond)
	res := probeOnce(t, testkit.Target(srv.URL, config.APIResponses), testkit.Scenario())
	if res.Outcome != OutcomeSuccess {
		t.Fatalf("%s %s\n%s", res.Outcome, res.Error, logOf(res))
	}
	if e := res.Engine; e == nil || !e.HasPrefill || e.Prefill != 12598*time.Microsecond || e.Source != "llamacpp_timings" {
		t.Fatalf("engine timings %+v; want llama.cpp's prompt_ms 12.598\n%s", res.Engine, logOf(res))
	}
	if len(res.TTFTParts) == 0 {
		t.Errorf("no TTFT split from llama.cpp's timings\n%s", logOf(res))
	}
}
