package prober

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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
		{"llamacpp", map[string]string{"/v1/models": "llamacpp-models.http"}, engineLlamaCPP, "", "tiny"},
		// Ollama: owned_by "library", the version from /api/version.
		{"ollama", map[string]string{"/v1/models": "ollama-models.http", "/api/version": "ollama-version.http"}, engineOllama, "0.0.0", "tiny:latest"},
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

// Each engine's version endpoint, asked first for the engine owned_by names.
func TestEngineVersionEndpoints(t *testing.T) {
	cases := []struct {
		ownedBy, path, body, engine, version string
	}{
		{"vllm", "/version", `{"version":"0.11.2"}`, engineVLLM, "0.11.2"},
		{"sglang", "/get_server_info", `{"version":"0.5.4","tp_size":1}`, engineSGLang, "0.5.4"},
		{"tgi", "/info", `{"model_id":"m","version":"3.3.6"}`, engineTGI, "3.3.6"},
		{"llamacpp", "/props", `{"build_info":"b6915-a1b2c3d","total_slots":4}`, engineLlamaCPP, "b6915-a1b2c3d"},
		{"library", "/api/version", `{"version":"0.12.3"}`, engineOllama, "0.12.3"},
	}
	for _, tc := range cases {
		t.Run(tc.engine, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/v1/models":
					fmt.Fprintf(w, `{"data":[{"id":"m","owned_by":%q}]}`, tc.ownedBy)
				case tc.path:
					fmt.Fprint(w, tc.body)
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			info := newClient(t, testkit.Target(srv.URL, config.APIChat)).RefreshInfo(t.Context())
			if info.Engine != tc.engine || info.EngineVersion != tc.version {
				t.Errorf("engine %q %q, want %q %q", info.Engine, info.EngineVersion, tc.engine, tc.version)
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
	if down.Engine != engineSim || down.EngineVersion != up.EngineVersion || !down.Confirmed.Equal(up.Confirmed) || !strings.Contains(down.ModelsError, "connection refused") {
		t.Errorf("after the target went down: %+v (before: %+v)", down, up)
	}
}
