package daemon

import (
	"bytes"
	"context"
	"fmt"
	"io"
	stdlog "log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/store"
)

const okChunk = `data: {"choices":[{"index":0,"text":" tok","finish_reason":null}]}` + "\n\n"

func eventStream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
}

func waitForClient(r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	<-r.Context().Done()
}

// faultServer answers /v1/models like an engine, and every other request
// with the fault.
func faultServer(t *testing.T, fault http.HandlerFunc) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			fmt.Fprint(w, `{"object":"list","data":[{"id":"m","owned_by":"vllm"}]}`)
			return
		}
		fault(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// The failure catalogue, end to end: for each way a target breaks, a daemon
// runs canaries and a burst against it, and the gate tries it. Each case
// checks the outcome and reason in the burst report (every planned request
// accounted for), the failure metric and target_up, the one log line that
// says the target went down and why, and the gate's exit code and text.
func TestFailureCatalogue(t *testing.T) {
	refused := func(t *testing.T) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ln.Close()
		return "http://" + ln.Addr().String()
	}
	cases := []struct {
		name              string
		url               func(t *testing.T) string
		discover          bool // no model configured: /v1/models finds it
		outcome           prober.Outcome
		phase, reason, in string // in: a piece of the error text
	}{
		{"refused", refused, false, prober.OutcomeConnectionError, "connect", "connection_refused", "connection refused"},
		{"reset mid-stream", func(t *testing.T) string {
			return faultServer(t, func(w http.ResponseWriter, r *http.Request) {
				conn, buf, err := w.(http.Hijacker).Hijack()
				if err != nil {
					return
				}
				fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", len(okChunk), okChunk)
				_ = buf.Flush()
				_ = conn.Close()
			}).URL
		}, false, prober.OutcomeStreamError, "stream", "stream_cut", "unexpected EOF"},
		{"headers then silence", func(t *testing.T) string {
			return faultServer(t, func(w http.ResponseWriter, r *http.Request) { eventStream(w); waitForClient(r) }).URL
		}, false, prober.OutcomeTimeout, "stream", "deadline", "0 output tokens in"},
		{"slow drip", func(t *testing.T) string {
			return faultServer(t, func(w http.ResponseWriter, r *http.Request) {
				eventStream(w)
				for {
					fmt.Fprint(w, okChunk)
					w.(http.Flusher).Flush()
					select {
					case <-r.Context().Done():
						return
					case <-time.After(400 * time.Millisecond):
					}
				}
			}).URL
		}, false, prober.OutcomeTimeout, "stream", "deadline", "output tokens in"},
		{"429 with Retry-After", func(t *testing.T) string {
			return faultServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "7")
				http.Error(w, `{"error":{"message":"queue full"}}`, http.StatusTooManyRequests)
			}).URL
		}, false, prober.OutcomeRejected, "headers", "http_status", "HTTP 429 Too Many Requests, Retry-After 7: queue full"},
		{"503 with Retry-After", func(t *testing.T) string {
			return faultServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "30")
				http.Error(w, `{"error":{"message":"draining"}}`, http.StatusServiceUnavailable)
			}).URL
		}, false, prober.OutcomeRejected, "headers", "http_status", "HTTP 503 Service Unavailable, Retry-After 30: draining"},
		{"500 with a body", func(t *testing.T) string {
			return faultServer(t, func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, `{"error":{"message":"CUDA out of memory"}}`, http.StatusInternalServerError)
			}).URL
		}, false, prober.OutcomeHTTPError, "headers", "http_status", "HTTP 500 Internal Server Error: CUDA out of memory"},
		{"empty choices forever", func(t *testing.T) string {
			return faultServer(t, func(w http.ResponseWriter, r *http.Request) {
				eventStream(w)
				for range 50 {
					fmt.Fprint(w, "data: {\"choices\":[]}\n\n")
				}
				fmt.Fprint(w, `data: {"choices":[{"index":0,"text":"","finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
			}).URL
		}, false, prober.OutcomeStreamError, "stream", "no_output", "without an output token"},
		{"no [DONE]", func(t *testing.T) string {
			return faultServer(t, func(w http.ResponseWriter, r *http.Request) { eventStream(w); fmt.Fprint(w, okChunk+okChunk) }).URL
		}, false, prober.OutcomeStreamError, "stream", "no_finish", "neither finish_reason nor [DONE]"},
		{"malformed JSON", func(t *testing.T) string {
			return faultServer(t, func(w http.ResponseWriter, r *http.Request) {
				eventStream(w)
				fmt.Fprint(w, okChunk+"data: {\"choices\": [\n\n")
			}).URL
		}, false, prober.OutcomeStreamError, "stream", "malformed_chunk", "malformed chunk"},
		{"a 1 MiB line", func(t *testing.T) string {
			return faultServer(t, func(w http.ResponseWriter, r *http.Request) {
				eventStream(w)
				fmt.Fprint(w, okChunk+"data: "+strings.Repeat("x", 1<<20+10)+"\n\n")
			}).URL
		}, false, prober.OutcomeStreamError, "stream", "line_too_long", "too long"},
		{"tokens beyond max_tokens", func(t *testing.T) string {
			return faultServer(t, func(w http.ResponseWriter, r *http.Request) {
				eventStream(w)
				for range 20000 {
					if _, err := fmt.Fprint(w, okChunk); err != nil {
						return
					}
				}
			}).URL
		}, false, prober.OutcomeStreamError, "stream", "max_tokens_exceeded", "does not honour max_tokens"},
		{"TLS failure", func(t *testing.T) string {
			srv := httptest.NewUnstartedServer(http.NotFoundHandler())
			srv.Config.ErrorLog = stdlog.New(io.Discard, "", 0)
			srv.StartTLS() // a certificate no one trusts
			t.Cleanup(srv.Close)
			return srv.URL
		}, false, prober.OutcomeConnectionError, "tls", "tls_error", "certificate"},
		{"redirect loop", func(t *testing.T) string {
			var srv *httptest.Server
			srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, srv.URL+r.URL.Path, http.StatusTemporaryRedirect)
			}))
			t.Cleanup(srv.Close)
			return srv.URL
		}, false, prober.OutcomeConnectionError, "headers", "redirect_loop", "redirects"},
		{"401 on discovery", func(t *testing.T) string {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, `{"error":{"message":"invalid API key"}}`, http.StatusUnauthorized)
			}))
			t.Cleanup(srv.Close)
			return srv.URL
		}, true, prober.OutcomeHTTPError, "discovery", "http_status", "GET /v1/models: HTTP 401 Unauthorized: invalid API key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			model := "\n    model: m"
			if tc.discover {
				model = ""
			}
			path := filepath.Join(t.TempDir(), "llmprobe.yml")
			cfg := fmt.Sprintf(`targets:
  - name: faulty
    url: %q%s
    api: completions
    timeout: 1s
scenarios:
  - {name: s, prompt_tokens: 8, output_tokens: 4, slo: {ttft: 500ms, target_ratio: 0.9}}
canary: {interval: 200ms}
bursts:
  - {name: catalogue, target: faulty, scenarios: [{scenario: s}], arrival: {process: constant, rate: 20}, requests: 6, schedule: {on_start: true}}
`, tc.url(t), model)
			if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}

			// The gate: not measured, and it says why.
			var stdout, stderr bytes.Buffer
			code := Gate(context.Background(), GateOptions{ConfigFile: path, Burst: "catalogue", StoragePath: t.TempDir(), Stdout: &stdout, Stderr: &stderr})
			if code != GateUnmeasured || !strings.Contains(stderr.String(), "target faulty") || !strings.Contains(stderr.String(), tc.reason) || !strings.Contains(stderr.String(), tc.in) {
				t.Errorf("gate: exit %d, want %d, saying target faulty, %s and %q:\n%s%s", code, GateUnmeasured, tc.reason, tc.in, stderr.String(), stdout.String())
			}

			// The daemon: canaries and the burst.
			logs := &testkit.Buffer{}
			storage := t.TempDir()
			d := startDaemon(t, Options{ConfigFile: path, StoragePath: storage, HistoryRecent: 5, HistoryFailures: 5,
				Logger: level.NewFilter(log.NewLogfmtLogger(logs), level.AllowInfo())})
			store := store.New(storage, nil)
			var rep *report.Report
			testkit.WaitUntil(t, "the burst's report and the target-down line", 20*time.Second, func() bool {
				rep, _ = store.Latest("catalogue")
				return rep != nil && strings.Contains(logs.String(), `msg="target down"`)
			})

			// The report: every planned request, each with the outcome and why.
			if rep.Outcomes[tc.outcome] != rep.Requests || rep.Requests+notSentCount(rep) != rep.PlannedRequests || rep.PlannedRequests != 6 {
				t.Errorf("report: %d planned, %d sent, outcomes %v, not sent %v; want every sent one %s", rep.PlannedRequests, rep.Requests, rep.Outcomes, rep.NotSent, tc.outcome)
			}
			if len(rep.Failures) == 0 || rep.Failures[0].Phase != tc.phase || rep.Failures[0].Reason != tc.reason || !strings.Contains(rep.Failures[0].Example, tc.in) {
				t.Errorf("report failures %+v; want %s in %s, %q", rep.Failures, tc.reason, tc.phase, tc.in)
			}
			if rep.Passed || rep.Latency["ttft"].Count != 0 {
				t.Errorf("passed %v with %d TTFT samples", rep.Passed, rep.Latency["ttft"].Count)
			}

			// The metrics.
			_, metrics := d.get("/metrics")
			failures := regexp.MustCompile(`(?m)^llmprobe_request_failures_total\{[^}]*phase="` + tc.phase + `",reason="` + tc.reason + `",[^}]*target="faulty"[^}]*\} [1-9]`)
			if !failures.MatchString(metrics) || !strings.Contains(metrics, `llmprobe_target_up{target="faulty"} 0`) ||
				!strings.Contains(metrics, `llmprobe_target_phase_duration_seconds{phase="connect",target="faulty"}`) {
				t.Errorf("/metrics lacks the failure (%s in %s), target_up 0 or the phase gauges:\n%s", tc.reason, tc.phase, grepLines(metrics, "faulty"))
			}

			// The log: one line that says the target went down, and why;
			// nothing per request.
			out := logs.String()
			down := grepLines(out, `msg="target down"`)
			if strings.Count(out, `msg="target down"`) != 1 || !strings.Contains(down, "level=warn") || !strings.Contains(down, "reason="+tc.reason) {
				t.Errorf("want one warn line saying the target is down with reason %s; the log:\n%s", tc.reason, out)
			}
			// At most: the target down, and its info unavailable.
			if n := strings.Count(out, "level=warn"); n > 2 {
				t.Errorf("%d warn lines for one broken target: per-request logging?\n%s", n, out)
			}
		})
	}
}

func notSentCount(rep *report.Report) int {
	n := 0
	for _, ns := range rep.NotSent {
		n += ns.Count
	}
	return n
}

// A burst in progress when a reload removes it, or when llmprobe stops, is
// stopped with that reason, and its report is written before Run returns.
func TestStoppedBurstsAreReported(t *testing.T) {
	hang := faultServer(t, func(w http.ResponseWriter, r *http.Request) { eventStream(w); waitForClient(r) })
	burstConfig := func(names ...string) string {
		cfg := fmt.Sprintf(`targets: [{name: slow, url: %q, model: m, api: completions, timeout: 30s}]
scenarios: [{name: kept, prompt_tokens: 8, output_tokens: 4}, {name: removed, prompt_tokens: 8, output_tokens: 4}]
canary: {probes: [{targets: [], scenarios: [kept], interval: 1h}]}
bursts:
`, hang.URL)
		for _, n := range names {
			cfg += fmt.Sprintf("  - {name: %s, target: slow, scenarios: [{scenario: %s}], arrival: {rate: 20}, duration: 1m, schedule: {on_start: true}}\n", n, n)
		}
		return cfg
	}
	path := filepath.Join(t.TempDir(), "llmprobe.yml")
	if err := os.WriteFile(path, []byte(burstConfig("kept", "removed")), 0o600); err != nil {
		t.Fatal(err)
	}
	storage := t.TempDir()
	d := startDaemon(t, Options{ConfigFile: path, StoragePath: storage})
	testkit.WaitUntil(t, "both bursts' requests in flight", 10*time.Second, func() bool {
		_, metrics := d.get("/metrics")
		inFlight := regexp.MustCompile(`llmprobe_in_flight_requests\{scenario="(kept|removed)",target="slow",traffic="burst"\} [1-9]`)
		return len(inFlight.FindAllString(metrics, -1)) == 2
	})
	if err := os.WriteFile(path, []byte(burstConfig("kept")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := d.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	store := store.New(storage, nil)
	testkit.WaitUntil(t, "the removed burst's report", 10*time.Second, func() bool {
		rep, _ := store.Latest("removed")
		return rep != nil
	})
	if err := d.shutdown(); err != nil {
		t.Fatal(err)
	}
	for burst, why := range map[string]string{"removed": "a configuration reload removed", "kept": "llmprobe is shutting down"} {
		rep, err := store.Latest(burst)
		if err != nil || rep == nil {
			t.Fatalf("%s: no report (%v)", burst, err)
		}
		if !rep.Aborted || !strings.Contains(rep.AbortReason, why) || rep.Outcomes[prober.OutcomeCancelled] == 0 ||
			len(rep.NotSent) != 1 || !strings.Contains(rep.NotSent[0].Reason, why) || rep.Requests+notSentCount(rep) != rep.PlannedRequests {
			t.Errorf("%s: aborted %v (%s), outcomes %v, not sent %v, %d planned", burst, rep.Aborted, rep.AbortReason, rep.Outcomes, rep.NotSent, rep.PlannedRequests)
		}
	}
}
