package prober

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
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
