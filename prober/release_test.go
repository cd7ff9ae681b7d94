package prober

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
)

// heldAnswer is a server that writes an answer and then keeps the
// connection open for hold, or until the client hangs up: it records when
// the answer's last byte went out and when the client hung up.
type heldAnswer struct {
	srv          *httptest.Server
	sent, hungUp atomic.Int64 // unix nanoseconds
}

// cannedAnswer is what a purpose-built server writes.
type cannedAnswer struct {
	status            int
	contentType, body string
}

func startHeld(t *testing.T, a cannedAnswer, hold time.Duration) *heldAnswer {
	t.Helper()
	h := &heldAnswer{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		drainRequest(r)
		w.Header().Set("Content-Type", a.contentType)
		w.WriteHeader(a.status)
		fmt.Fprint(w, a.body)
		h.sent.Store(time.Now().UnixNano()) // before the client can see it
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			h.hungUp.Store(time.Now().UnixNano())
		case <-time.After(hold):
		}
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func drainRequest(r *http.Request) {
	buf := make([]byte, 4<<10)
	for {
		if _, err := r.Body.Read(buf); err != nil {
			return
		}
	}
}

// A server that keeps the connection open after the answer's end (the final
// event, the end of an unstreamed answer's JSON value) or after an error
// status whose body it never finishes: the result is final at that end, not
// when the server lets go, and the connection is closed within the grace.
func TestAnswerEndsAtItsFinalEventNotAtTheConnection(t *testing.T) {
	const hold = 5 * time.Second
	chatStream := `data: {"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{"content":" b"},"finish_reason":"stop"}],"usage":{"prompt_tokens":16,"completion_tokens":2}}` + "\n\n" +
		"data: [DONE]\n\n"
	responses := "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\" w\",\"item_id\":\"m\",\"output_index\":0,\"content_index\":0}\n\n" + completedEvent(1)
	whole := `{"choices":[{"index":0,"message":{"role":"assistant","content":"a b"},"finish_reason":"stop"}],"usage":{"prompt_tokens":16,"completion_tokens":2}}`
	unstreamed := false
	for _, c := range []struct {
		name   string
		api    config.API
		stream *bool
		server cannedAnswer
		want   Outcome
		reason string
		tokens int
	}{
		{"chat stream, held after [DONE]", config.APIChat, nil, cannedAnswer{status: 200, contentType: "text/event-stream", body: chatStream}, OutcomeSuccess, "", 2},
		{"responses stream, held after response.completed", config.APIResponses, nil, cannedAnswer{status: 200, contentType: "text/event-stream", body: responses}, OutcomeSuccess, "", 1},
		{"unstreamed chat, held after its JSON", config.APIChat, &unstreamed, cannedAnswer{status: 200, contentType: "application/json", body: whole}, OutcomeSuccess, "", 2},
		{"503 whose body never ends", config.APIChat, nil, cannedAnswer{status: 503, contentType: "application/json", body: `{"error":{"message":"engine overloaded"`}, OutcomeRejected, reasonHTTPStatus, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := startHeld(t, c.server, hold)
			s := testkit.Scenario()
			s.Stream = c.stream
			res := probeOnce(t, testkit.Target(h.srv.URL, c.api), s)
			returned := time.Now()
			if res.Outcome != c.want || res.Reason != c.reason || res.OutputTokens != c.tokens {
				t.Fatalf("%s %s, %d tokens, want %s %q, %d tokens: %s\n%s", res.Outcome, res.Reason, res.OutputTokens, c.want, c.reason, c.tokens, res.Error, logOf(res))
			}
			sent := time.Unix(0, h.sent.Load())
			// The result came at the answer's end, seconds before the
			// server would have let go (errors: within their grace).
			if late := returned.Sub(sent); late > errorGrace+time.Second {
				t.Errorf("result %s after the answer's last byte, want it at once (the server holds %s)", late, hold)
			}
			testkit.WaitUntil(t, "the client hangs up", 2*time.Second, func() bool { return h.hungUp.Load() != 0 })
			closed := time.Unix(0, h.hungUp.Load()).Sub(sent)
			if closed > drainGrace+time.Second {
				t.Errorf("connection closed %s after the answer, want within %s", closed, drainGrace)
			}
			t.Logf("result %s, connection closed %s after the answer's last byte (server holds %s)", returned.Sub(sent).Round(time.Microsecond), closed.Round(time.Millisecond), hold)
		})
	}
}
