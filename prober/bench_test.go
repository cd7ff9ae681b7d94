package prober

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prompt"
)

// BenchmarkStreamParse is the whole per-chunk path of a probe: SSE framing,
// JSON decoding of the chunk, and token bookkeeping. chunks/s is per core.
func BenchmarkStreamParse(b *testing.B) {
	const chunk = `data: {"id":"cmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" hello"},"logprobs":null,"finish_reason":null}]}` + "\n\n"
	const n = 10000
	body := []byte(strings.Repeat(chunk, n) + `data: {"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":10000,"total_tokens":10010}}` + "\n\ndata: [DONE]\n\n")
	c, err := NewClient(testkit.Target("http://127.0.0.1:1", config.APIChat))
	if err != nil {
		b.Fatal(err)
	}
	req := Request{Scenario: testkit.Scenario(), Sched: time.Now()}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	chunks := 0
	for b.Loop() {
		res := &Result{Sched: req.Sched}
		c.readStream(context.Background(), bytes.NewReader(body), req, res)
		if res.Outcome != OutcomeSuccess || res.OutputChunks != n {
			b.Fatalf("%s %s %d", res.Outcome, res.Error, res.OutputChunks)
		}
		chunks += n + 2
	}
	b.ReportMetric(float64(chunks)/b.Elapsed().Seconds(), "chunks/s")
}

// BenchmarkLongPromptRequest is the memory one long request costs: a
// 128k-token synthetic prompt built the way a burst builds it (one builder,
// At per request) and sent to a server that drains the body and answers one
// token. B/op is everything allocated per request, client and server; the
// builder's body (made once, some 700 KB) is not in it.
func BenchmarkLongPromptRequest(b *testing.B) {
	const tokens = 128 << 10
	var got atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		got.Store(n)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"length"}]}`+"\n\n"+
			`data: {"choices":[],"usage":{"prompt_tokens":131072,"completion_tokens":1}}`+"\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	for _, api := range []config.API{config.APIChat, config.APICompletions} {
		b.Run(string(api), func(b *testing.B) {
			c, err := NewClient(testkit.Target(srv.URL, api))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			s := testkit.Scenario()
			s.PromptTokens = config.Distribution{Kind: config.DistFixed, Value: tokens}
			s.OutputTokens = config.Distribution{Kind: config.DistFixed, Value: 1}
			builder := prompt.NewBuilder(s, prompt.Source{}, 1)
			builder.At(0) // the body, made once per builder (a burst run), not per request
			b.ReportAllocs()
			n := uint64(0)
			for b.Loop() {
				p, maxTokens := builder.At(n)
				n++
				res := c.Do(context.Background(), Request{Scenario: s, Traffic: TrafficBurst, Prompt: p, MaxTokens: maxTokens, Sched: time.Now()})
				if res.Outcome != OutcomeSuccess {
					b.Fatalf("%s: %s", res.Outcome, res.Error)
				}
			}
			// A 128k-word prompt is some 900 KB of body.
			if n := got.Load(); n < 4*tokens {
				b.Fatalf("the server read %d bytes of body", n)
			}
			b.ReportMetric(float64(got.Load()), "body-bytes")
		})
	}
}
