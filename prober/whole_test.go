package prober

import (
	"strings"
	"testing"
)

// A vLLM reasoning answer names its reasoning twice, reasoning and the
// older reasoning_content: it is read once, and so estimated once when the
// usage is missing.
func TestReadWholeReasoningOnce(t *testing.T) {
	body := `{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Paris.","reasoning":"the capital of France","reasoning_content":"the capital of France"},"finish_reason":"stop"}]}`
	w, err := chat{}.whole(strings.NewReader(body), nil, Request{MaxTokens: 16}, 256, dialect{})
	if err != nil {
		t.Fatal(err)
	}
	if w.Reasoning != "the capital of France" || w.Content != "Paris." || w.usage != nil || w.ReasoningTextTokens != 6 || w.TextTokens != 8 {
		t.Errorf("%+v: want the reasoning once (6 tokens by estimate) and 2 of answer", w)
	}
}
