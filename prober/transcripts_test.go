package prober

import (
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
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
			res := probeOnce(t, testTarget(srv.URL, tc.api), testScenario())
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
