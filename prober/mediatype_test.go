package prober

import (
	"testing"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
)

// Media types and their parameters are case-insensitive: a stream whose
// Content-Type is written in any case, with any charset, is read; another
// type is still refused.
func TestEventStreamMediaTypeInAnyCase(t *testing.T) {
	stream := `data: {"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"
	for _, c := range []struct {
		contentType string
		want        Outcome
		reason      string
	}{
		{"text/event-stream", OutcomeSuccess, ""},
		{"Text/Event-Stream; Charset=UTF-8", OutcomeSuccess, ""},
		{`TEXT/EVENT-STREAM;charset="utf-8"`, OutcomeSuccess, ""},
		{"text/event-stream; charset", OutcomeSuccess, ""},
		{"text/event-streams", OutcomeStreamError, reasonNotEventStream},
		{"Application/JSON; Charset=UTF-8", OutcomeStreamError, reasonNotEventStream},
	} {
		h := startHeld(t, cannedAnswer{status: 200, contentType: c.contentType, body: stream}, 0)
		res := probeOnce(t, testkit.Target(h.srv.URL, config.APIChat), testkit.Scenario())
		if res.Outcome != c.want || res.Reason != c.reason {
			t.Errorf("Content-Type %q: %s %q (%s), want %s %q", c.contentType, res.Outcome, res.Reason, res.Error, c.want, c.reason)
		}
	}
}
