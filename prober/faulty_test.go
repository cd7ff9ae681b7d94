package prober

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const okChunk = `data: {"choices":[{"index":0,"text":" tok","finish_reason":null}]}` + "\n\n"

func okStream(w http.ResponseWriter, tokens int) {
	w.Header().Set("Content-Type", "text/event-stream")
	for range tokens {
		fmt.Fprint(w, okChunk)
		w.(http.Flusher).Flush()
	}
}

// hijackClose takes the connection and closes it, after writing raw bytes.
func hijackClose(t *testing.T, w http.ResponseWriter, raw string) {
	conn, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		t.Error(err)
		return
	}
	_, _ = buf.WriteString(raw)
	_ = buf.Flush()
	_ = conn.Close()
}

// One purpose-built faulty server per outcome; each must be classified right,
// without a panic, and leave no goroutine behind.
func TestFaultyServers(t *testing.T) {
	cases := []struct {
		name    string
		handler func(t *testing.T, w http.ResponseWriter, r *http.Request)
		timeout time.Duration
		want    Outcome
		errHas  string
	}{
		{"429", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"error":{"message":"queue full"}}`, http.StatusTooManyRequests)
		}, 0, OutcomeRejected, "queue full"},
		{"503", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusServiceUnavailable)
		}, 0, OutcomeRejected, "HTTP 503"},
		{"500", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"error":"boom"}`, http.StatusInternalServerError)
		}, 0, OutcomeHTTPError, "boom"},
		{"404 wrong model", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"message":"model not found"}`, http.StatusNotFound)
		}, 0, OutcomeHTTPError, "model not found"},
		{"reset before headers", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			hijackClose(t, w, "")
		}, 0, OutcomeConnectionError, "EOF"},
		{"reset mid-stream", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			hijackClose(t, w, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"+
				fmt.Sprintf("%x\r\n%s\r\n", len(okChunk), okChunk))
		}, 0, OutcomeStreamError, "unexpected EOF"},
		{"cut inside an event", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, okChunk+`data: {"choices":[`)
		}, 0, OutcomeStreamError, "inside an event"},
		{"stall past the timeout", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			okStream(w, 2)
			drainAndWait(r)
		}, 300 * time.Millisecond, OutcomeTimeout, "deadline"},
		{"stall before headers", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			drainAndWait(r)
		}, 300 * time.Millisecond, OutcomeTimeout, "deadline"},
		{"malformed JSON chunk", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			okStream(w, 2)
			fmt.Fprint(w, "data: {\"choices\": [\n\n")
			okStream(w, 2)
			fmt.Fprint(w, "data: [DONE]\n\n")
		}, 0, OutcomeStreamError, "malformed chunk"},
		{"no finish and no [DONE]", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			okStream(w, 3)
		}, 0, OutcomeStreamError, "neither finish_reason nor [DONE]"},
		{"line over the limit", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			okStream(w, 1)
			fmt.Fprint(w, "data: "+strings.Repeat("x", maxLineBytes+10)+"\n\n")
		}, 0, OutcomeStreamError, "too long"},
		{"error event", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			okStream(w, 1)
			fmt.Fprint(w, "event: error\ndata: {\"message\":\"engine died\"}\n\n")
		}, 0, OutcomeStreamError, "engine died"},
		{"error object in stream", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			okStream(w, 1)
			fmt.Fprint(w, "data: {\"error\":{\"message\":\"out of KV cache\",\"code\":500}}\n\n")
		}, 0, OutcomeStreamError, "out of KV cache"},
		{"not an event stream", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"choices":[{"text":"hi"}]}`)
		}, 0, OutcomeStreamError, "not text/event-stream"},
		{"finish without [DONE] is accepted", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			okStream(w, 2)
			fmt.Fprint(w, `data: {"choices":[{"index":0,"text":"","finish_reason":"stop"}]}`+"\n\n")
		}, 0, OutcomeSuccess, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { tc.handler(t, w, r) }))
			defer srv.Close()
			target := testkit.Target(srv.URL, config.APICompletions)
			if tc.timeout > 0 {
				target.Timeout = config.Duration(tc.timeout)
			}
			res := probeOnce(t, target, testkit.Scenario())
			if res.Outcome != tc.want {
				t.Fatalf("outcome = %s (%s), want %s\n%s", res.Outcome, res.Error, tc.want, logOf(res))
			}
			if !strings.Contains(res.Error, tc.errHas) {
				t.Errorf("error %q does not mention %q", res.Error, tc.errHas)
			}
			if tc.want != OutcomeSuccess && res.Good {
				t.Error("a failed request counted as good")
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	res := probeOnce(t, testkit.Target(url, config.APIChat), testkit.Scenario())
	if res.Outcome != OutcomeConnectionError {
		t.Fatalf("outcome = %s (%s), want connection_error", res.Outcome, res.Error)
	}
}

// A failed request misses every objective, so a server that rejects all
// requests can never look compliant.
func TestFailuresMissEveryObjective(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	s := testkit.Scenario()
	s.SLO = config.SLO{TTFT: config.Duration(time.Second), E2E: config.Duration(time.Second), TargetRatio: 0.9}
	res := probeOnce(t, testkit.Target(srv.URL, config.APIChat), s)
	if len(res.Checks) != 2 {
		t.Fatalf("checks = %+v, want ttft and e2e", res.Checks)
	}
	for _, c := range res.Checks {
		if c.Met {
			t.Errorf("%s met on a rejected request", c.Objective)
		}
	}
}
