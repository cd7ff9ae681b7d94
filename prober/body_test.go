package prober

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prober/transport"
	"github.com/llmprobe/llmprobe/prompt"
)

// The body goes out as openai.NewBody writes it (byte for byte the
// marshalled request, see its tests), with a known Content-Length, not
// chunked, for both APIs, with and without a Tail, with text that needs
// escaping, extra_body, stream_options and sampling; the server reads the
// prompt whole.
func TestBodySentWithItsLength(t *testing.T) {
	type sent struct {
		body          []byte
		contentLength int64
		chunked       bool
	}
	got := make(chan sent, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- sent{b, r.ContentLength, len(r.TransferEncoding) > 0}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"ok"},"text":"ok","finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	long := testkit.Scenario()
	long.PromptTokens = config.Distribution{Kind: config.DistFixed, Value: 20_000}
	longPrompt, _ := prompt.NewBuilder(long, prompt.Source{}, 1).At(3)
	if longPrompt.Tail == "" {
		t.Fatal("a synthetic long prompt has no tail")
	}
	temp, topP, seed := 0.5, 0.9, int64(42)
	sampled := testkit.Scenario()
	sampled.Sampling = config.Sampling{Temperature: &temp, TopP: &topP, Seed: &seed}
	prompts := map[string]prompt.Prompt{
		"tail":      longPrompt,
		"no tail":   {Text: "ref: a b c d\nSay OK.", RequestedTokens: 8},
		"escaped":   {Text: "ref:\n\"quoted\" <b>&</b> \\ é \u2028 \xff\t", Tail: " then plain words", RequestedTokens: 9},
		"tail only": {Tail: " x <y>", RequestedTokens: 2},
	}
	extras := map[string]map[string]any{
		"none":  nil,
		"extra": {"ignore_eos": true, "stream_options": map[string]any{"continuous_usage_stats": true}, "zz_last": []any{"a", 1.5}},
	}
	for _, api := range []config.API{config.APIChat, config.APICompletions} {
		for extraName, extra := range extras {
			target := testkit.Target(srv.URL, api)
			target.ExtraBody = extra
			c := newClient(t, target)
			for name, p := range prompts {
				r := Request{Scenario: sampled, Prompt: p, MaxTokens: 6, Sched: time.Now()}
				if res := c.Do(context.Background(), r); res.Outcome != OutcomeSuccess {
					t.Fatalf("%s/%s/%s: %s %s", api, extraName, name, res.Outcome, res.Error)
				}
				s := <-got
				body, err := NewBody(textRequest(api, "m", r, extra))
				if err != nil {
					t.Fatal(err)
				}
				want, _ := io.ReadAll(body.Open())
				if !bytes.Equal(s.body, want) {
					t.Errorf("%s/%s/%s: sent\n%.300s\nwant\n%.300s", api, extraName, name, s.body, want)
				}
				if s.contentLength != int64(len(want)) || s.chunked {
					t.Errorf("%s/%s/%s: Content-Length %d (chunked %v), want %d", api, extraName, name, s.contentLength, s.chunked, len(want))
				}
				var decoded map[string]any
				if err := json.Unmarshal(s.body, &decoded); err != nil {
					t.Fatalf("%s/%s/%s: %v", api, extraName, name, err)
				}
				content, _ := decoded["prompt"].(string)
				if api == config.APIChat {
					msgs, _ := decoded["messages"].([]any)
					if len(msgs) == 1 {
						content, _ = msgs[0].(map[string]any)["content"].(string)
					}
				}
				if content != strings.ToValidUTF8(p.Text+p.Tail, "\ufffd") {
					t.Errorf("%s/%s/%s: the server read another prompt (%d bytes, want %d)", api, extraName, name, len(content), len(p.Text+p.Tail))
				}
			}
		}
	}
}

// A server that closes the connection while a long body is still being
// written is a reset, as it is before a short body's headers are answered:
// the transport may report the write that failed on the closed connection
// rather than the read.
func TestLongBodyCutIsAReset(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hijackClose(t, w, "")
	}))
	defer srv.Close()
	s := testkit.Scenario()
	s.PromptTokens = config.Distribution{Kind: config.DistFixed, Value: 128 << 10}
	c := newClient(t, testkit.Target(srv.URL, config.APIChat))
	builder := prompt.NewBuilder(s, prompt.Source{}, 1)
	for i := range 20 {
		p, maxTokens := builder.At(uint64(i))
		res := c.Do(context.Background(), Request{Scenario: s, Prompt: p, MaxTokens: maxTokens, Sched: time.Now()})
		if res.Outcome != OutcomeConnectionError || res.Reason != transport.ReasonReset {
			t.Fatalf("request %d: %s, %s (%s), want connection_error, %s", i, res.Outcome, res.Reason, res.Error, transport.ReasonReset)
		}
	}
}
