package prober

import (
	"fmt"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
)

// Usage held against the stream: more tokens than deltas is legal (a delta
// may carry several); fewer than the deltas carried, less the switches
// between kinds, is not, and the deltas count; above max_tokens fails.
func TestUsageAgainstTheStream(t *testing.T) {
	stream := func(reasoning, content, usage int) string {
		var b strings.Builder
		for i := range reasoning {
			fmt.Fprintf(&b, `data: {"choices":[{"index":0,"delta":{"reasoning_content":"r%d"}}]}`+"\n\n", i)
		}
		for i := range content {
			fmt.Fprintf(&b, `data: {"choices":[{"index":0,"delta":{"content":" w%d"}}]}`+"\n\n", i)
		}
		fmt.Fprintf(&b, `data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}],"usage":{"prompt_tokens":16,"completion_tokens":%d}}`+"\n\ndata: [DONE]\n\n", usage)
		return b.String()
	}
	for _, c := range []struct {
		name           string
		body           string
		maxTokens      int
		want           Outcome
		tokens         int
		source         TokenSource
		mismatch, logs string
	}{
		{"usage above the deltas", stream(0, 20, 64), 100, OutcomeSuccess, 64, TokensFromUsage, "", ""},
		{"usage equal to the deltas", stream(0, 20, 20), 100, OutcomeSuccess, 20, TokensFromUsage, "", ""},
		{"one switch, one token fewer", stream(4, 16, 19), 100, OutcomeSuccess, 19, TokensFromUsage, "", ""},
		{"usage below the deltas", stream(0, 20, 5), 100, OutcomeSuccess, 20, TokensFromChunks, TokenMismatchBelowDeltas, "usage says 5 completion tokens, fewer than the stream carried (20 output deltas, 0 switches between kinds, 0 tool calls: at least 20 tokens): counted from the deltas"},
		{"usage above max_tokens", stream(0, 20, 64), 32, OutcomeStreamError, 64, TokensFromUsage, TokenMismatchAboveMax, "usage reports 64 completion tokens for max_tokens 32"},
	} {
		h := startHeld(t, cannedAnswer{status: 200, contentType: "text/event-stream", body: c.body}, 0)
		s := testkit.Scenario()
		s.OutputTokens = config.Distribution{Kind: config.DistFixed, Value: c.maxTokens}
		res := probeOnce(t, testkit.Target(h.srv.URL, config.APIChat), s)
		if res.Outcome != c.want || res.OutputTokens != c.tokens || res.TokenSource != c.source || res.TokenMismatch != c.mismatch {
			t.Errorf("%s: %s, %d tokens from %s, mismatch %q; want %s, %d from %s, %q\n%s", c.name, res.Outcome, res.OutputTokens, res.TokenSource, res.TokenMismatch, c.want, c.tokens, c.source, c.mismatch, logOf(res))
		}
		if !strings.Contains(logOf(res)+res.Error, c.logs) {
			t.Errorf("%s: neither log nor error says %q:\n%s\n%s", c.name, c.logs, res.Error, logOf(res))
		}
	}
}
