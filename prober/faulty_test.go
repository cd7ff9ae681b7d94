package prober

import (
	"context"
	"fmt"
	"io"
	stdlog "log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	promconfig "github.com/prometheus/common/config"
	"go.uber.org/goleak"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prober/transport"
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

// One purpose-built faulty server per failure: each is classified with its
// outcome, phase, reason and text, without a panic, and leaves no goroutine
// behind.
func TestFaultyServers(t *testing.T) {
	cases := []struct {
		name          string
		handler       func(t *testing.T, w http.ResponseWriter, r *http.Request)
		timeout       time.Duration
		want          Outcome
		phase, reason string
		errHas        string
	}{
		{"429 with Retry-After", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "7")
			http.Error(w, `{"error":{"message":"queue full"}}`, http.StatusTooManyRequests)
		}, 0, OutcomeRejected, transport.PhaseHeaders, reasonHTTPStatus, "HTTP 429 Too Many Requests, Retry-After 7: queue full"},
		{"503", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusServiceUnavailable)
		}, 0, OutcomeRejected, transport.PhaseHeaders, reasonHTTPStatus, "HTTP 503"},
		{"500 with a body", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"error":"boom"}`, http.StatusInternalServerError)
		}, 0, OutcomeHTTPError, transport.PhaseHeaders, reasonHTTPStatus, "HTTP 500 Internal Server Error: boom"},
		{"404 wrong model", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"message":"model not found"}`, http.StatusNotFound)
		}, 0, OutcomeHTTPError, transport.PhaseHeaders, reasonHTTPStatus, "model not found"},
		{"reset before headers", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			hijackClose(t, w, "")
		}, 0, OutcomeConnectionError, transport.PhaseHeaders, transport.ReasonReset, "EOF"},
		{"reset mid-stream", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			hijackClose(t, w, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"+
				fmt.Sprintf("%x\r\n%s\r\n", len(okChunk), okChunk))
		}, 0, OutcomeStreamError, phaseStream, reasonStreamCut, "unexpected EOF"},
		{"cut inside an event", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, okChunk+`data: {"choices":[`)
		}, 0, OutcomeStreamError, phaseStream, reasonStreamCut, "inside an event"},
		{"slow drip past the timeout", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			for range 100 {
				okStream(w, 1)
				select {
				case <-r.Context().Done():
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
		}, 300 * time.Millisecond, OutcomeTimeout, phaseStream, transport.ReasonDeadline, "output tokens in"},
		{"headers then silence", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			drainAndWait(r)
		}, 300 * time.Millisecond, OutcomeTimeout, phaseStream, transport.ReasonDeadline, "0 output tokens in"},
		{"silence before headers", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			drainAndWait(r)
		}, 300 * time.Millisecond, OutcomeTimeout, transport.PhaseHeaders, transport.ReasonDeadline, "deadline"},
		{"malformed JSON chunk", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			okStream(w, 2)
			fmt.Fprint(w, "data: {\"choices\": [\n\n")
			okStream(w, 2)
			fmt.Fprint(w, "data: [DONE]\n\n")
		}, 0, OutcomeStreamError, phaseStream, reasonMalformed, "malformed chunk"},
		{"no finish and no [DONE]", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			okStream(w, 3)
		}, 0, OutcomeStreamError, phaseStream, reasonNoFinish, "neither finish_reason nor [DONE]"},
		{"a 1 MiB line", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			okStream(w, 1)
			fmt.Fprint(w, "data: "+strings.Repeat("x", maxLineBytes+10)+"\n\n")
		}, 0, OutcomeStreamError, phaseStream, reasonLineTooLong, "too long"},
		{"error event", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			okStream(w, 1)
			fmt.Fprint(w, "event: error\ndata: {\"message\":\"engine died\"}\n\n")
		}, 0, OutcomeStreamError, phaseStream, reasonErrorInStream, "engine died"},
		{"error object in stream", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			okStream(w, 1)
			fmt.Fprint(w, "data: {\"error\":{\"message\":\"out of KV cache\",\"code\":500}}\n\n")
		}, 0, OutcomeStreamError, phaseStream, reasonErrorInStream, "out of KV cache"},
		{"not an event stream", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"choices":[{"text":"hi"}]}`)
		}, 0, OutcomeStreamError, transport.PhaseHeaders, reasonNotEventStream, "not text/event-stream"},
		{"empty choices forever", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			for range 20 {
				fmt.Fprint(w, "data: {\"choices\":[]}\n\n")
			}
			fmt.Fprint(w, `data: {"choices":[{"index":0,"text":"","finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
		}, 0, OutcomeStreamError, phaseStream, reasonNoOutput, "without an output token"},
		{"tokens beyond max_tokens by usage", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			okStream(w, 6)
			fmt.Fprint(w, `data: {"choices":[{"index":0,"text":"","finish_reason":"length"}],"usage":{"prompt_tokens":16,"completion_tokens":20000}}`+"\n\ndata: [DONE]\n\n")
		}, 0, OutcomeStreamError, phaseStream, reasonMaxTokens, "20000 completion tokens for max_tokens 6"},
		{"tokens beyond max_tokens, streamed", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			for range 20000 {
				if _, err := fmt.Fprint(w, okChunk); err != nil {
					return // the prober stopped reading
				}
			}
		}, 0, OutcomeStreamError, phaseStream, reasonMaxTokens, "does not honour max_tokens"},
		{"finish without [DONE] is accepted", func(t *testing.T, w http.ResponseWriter, r *http.Request) {
			okStream(w, 2)
			fmt.Fprint(w, `data: {"choices":[{"index":0,"text":"","finish_reason":"stop"}]}`+"\n\n")
		}, 0, OutcomeSuccess, "", "", ""},
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
			checkFailure(t, res, tc.want, tc.phase, tc.reason, tc.errHas)
		})
	}
}

func checkFailure(t *testing.T, res *Result, outcome Outcome, phase, reason, errHas string) {
	t.Helper()
	if res.Outcome != outcome || res.Phase != phase || res.Reason != reason {
		t.Fatalf("outcome %s, phase %q, reason %q (%s); want %s, %q, %q\n%s", res.Outcome, res.Phase, res.Reason, res.Error, outcome, phase, reason, logOf(res))
	}
	if !strings.Contains(res.Error, errHas) {
		t.Errorf("error %q does not say %q", res.Error, errHas)
	}
	if outcome != OutcomeSuccess && (res.Good || !strings.Contains(logOf(res), res.Error)) {
		t.Errorf("a failure counted as good (%v), or its log lacks the error:\n%s", res.Good, logOf(res))
	}
}

// Failures before any response: each names its phase and reason.
func TestTransportFailures(t *testing.T) {
	refused := httptest.NewServer(http.NotFoundHandler())
	refusedURL := refused.URL
	refused.Close()
	tlsSrv := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsSrv.Config.ErrorLog = stdlog.New(io.Discard, "", 0) // the refused handshake is the point
	tlsSrv.StartTLS()                                      // its certificate is trusted by no one
	defer tlsSrv.Close()
	var loop *httptest.Server
	loop = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, loop.URL+r.URL.Path, http.StatusFound)
	}))
	defer loop.Close()
	cases := []struct {
		name, url     string
		want          Outcome
		phase, reason string
		errHas        string
	}{
		{"refused", refusedURL, OutcomeConnectionError, transport.PhaseConnect, transport.ReasonRefused, "connection refused"},
		{"no such host", "http://llmprobe-test.invalid:8000", OutcomeConnectionError, transport.PhaseDNS, transport.ReasonDNS, "no such host"},
		{"untrusted certificate", tlsSrv.URL, OutcomeConnectionError, transport.PhaseTLS, transport.ReasonTLS, "certificate"},
		{"redirect loop", loop.URL, OutcomeConnectionError, transport.PhaseHeaders, transport.ReasonRedirect, "redirects"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := probeOnce(t, testkit.Target(tc.url, config.APIChat), testkit.Scenario())
			checkFailure(t, res, tc.want, tc.phase, tc.reason, tc.errHas)
		})
	}
}

// Model discovery keeps the status /v1/models answered with.
func TestDiscoveryFailures(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusNotFound} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, `{"error":{"message":"no access"}}`, status)
			}))
			defer srv.Close()
			target := testkit.Target(srv.URL, config.APIChat)
			target.Model = "" // discover it
			res := probeOnce(t, target, testkit.Scenario())
			checkFailure(t, res, OutcomeHTTPError, phaseDiscovery, reasonHTTPStatus, fmt.Sprintf("GET /v1/models: HTTP %d %s: no access", status, http.StatusText(status)))
			if res.HTTPStatus != status {
				t.Errorf("status %d, want %d", res.HTTPStatus, status)
			}
			if res.Timings.Connect <= 0 || res.Timings.TTFB != 0 {
				t.Errorf("timings %+v: want the discovery's connect, and no first byte of a request never sent", res.Timings)
			}
		})
	}
}

// A target that echoes the request's credentials in its error body: the
// failure keeps the body, without the secrets.
func TestEchoedSecretsAreRedacted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":"bad request with Authorization %s and X-Api-Key %s"}}`, r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"))
	}))
	defer srv.Close()
	target := testkit.Target(srv.URL, config.APIChat)
	target.HTTPClientConfig.HTTPHeaders = &promconfig.Headers{Headers: map[string]promconfig.Header{"X-Api-Key": {Secrets: []promconfig.Secret{"sk-header-0123456789"}}}}
	target.HTTPClientConfig.Authorization = &promconfig.Authorization{Type: "Bearer", Credentials: "sk-bearer-9876543210"}
	res := probeOnce(t, target, testkit.Scenario())
	everything := res.Error + res.Body + logOf(res)
	for _, secret := range []string{"sk-header-0123456789", "sk-bearer-9876543210"} {
		if strings.Contains(everything, secret) {
			t.Errorf("the result shows %s:\n%s", secret, everything)
		}
	}
	if !strings.Contains(res.Error, "Authorization Bearer <secret> and X-Api-Key <secret>") || !strings.Contains(res.Body, "<secret>") {
		t.Errorf("error %q, body %q: the echo should be there, scrubbed", res.Error, res.Body)
	}
}

// A redirect to another host (another port counts) carries neither the
// target's credentials nor its secret headers, only plain header values; one
// on the target's own host carries all of them; follow_redirects: false
// follows none.
func TestRedirectsKeepCredentialsOnTheTargetsHost(t *testing.T) {
	seen := make(chan http.Header, 4)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Clone()
		http.Error(w, "elsewhere", http.StatusTeapot)
	}))
	defer other.Close()
	own := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/chat/completions":
			http.Redirect(w, r, other.URL+"/v1/chat/completions", http.StatusTemporaryRedirect)
		case "/v1/models":
			http.Redirect(w, r, "/moved/models", http.StatusTemporaryRedirect)
		case "/moved/models":
			seen <- r.Header.Clone()
			http.Error(w, "no", http.StatusTeapot)
		}
	}))
	defer own.Close()
	target := testkit.Target(own.URL, config.APIChat)
	target.HTTPClientConfig.HTTPHeaders = &promconfig.Headers{Headers: map[string]promconfig.Header{
		"X-Api-Key": {Secrets: []promconfig.Secret{"sk-header-0123456789"}},
		"X-Team":    {Values: []string{"inference"}},
	}}
	target.HTTPClientConfig.Authorization = &promconfig.Authorization{Type: "Bearer", Credentials: "sk-bearer-9876543210"}

	res := probeOnce(t, target, testkit.Scenario())
	if res.HTTPStatus != http.StatusTeapot {
		t.Fatalf("status %d, want the other host's 418", res.HTTPStatus)
	}
	h := <-seen
	if h.Get("X-Api-Key") != "" || h.Get("Authorization") != "" || h.Get("X-Team") != "inference" {
		t.Errorf("the other host got X-Api-Key %q, Authorization %q, X-Team %q; want only X-Team", h.Get("X-Api-Key"), h.Get("Authorization"), h.Get("X-Team"))
	}

	c, err := NewClient(target)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.RefreshInfo(context.Background())
	h = <-seen
	if h.Get("X-Api-Key") != "sk-header-0123456789" || h.Get("Authorization") != "Bearer sk-bearer-9876543210" {
		t.Errorf("a redirect on the target's host lost its credentials: %v", h)
	}

	target.HTTPClientConfig.FollowRedirects = false
	res = probeOnce(t, target, testkit.Scenario())
	if res.HTTPStatus != http.StatusTemporaryRedirect || len(seen) != 0 {
		t.Errorf("follow_redirects false: status %d, %d requests elsewhere; want 307 and none", res.HTTPStatus, len(seen))
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
