package prober

import (
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
)

// hangUp serves requests by reading them and closing the connection;
// reset closes it with a TCP reset instead of a FIN.
func hangUp(t *testing.T, reset bool) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		if tcp, ok := conn.(*net.TCPConn); ok && reset {
			_ = tcp.SetLinger(0)
		}
		conn.Close()
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Each failure has one line, each part once: where, what broke in words
// (with the address, without Go's "Post \"…\": dial tcp …: connect:"
// wrappers), and the bounded code; the log says the same.
func TestFailureTextSaysEachThingOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := ln.Addr().String()
	ln.Close()
	reset, eof := hangUp(t, true), hangUp(t, false)
	slow := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { drainAndWait(r) }))
	t.Cleanup(slow.Close)
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake llmprobe refuses
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	host := func(url string) string { return strings.TrimPrefix(strings.TrimPrefix(url, "http://"), "https://") }

	for _, c := range []struct {
		name, url string
		timeout   time.Duration
		want      string
	}{
		{"refused", "http://" + refused, 0, "connect: connection refused (" + refused + ") [connection_refused]"},
		{"reset", reset.URL, 0, "headers: connection reset by peer (" + host(reset.URL) + ") [connection_reset]"},
		{"eof", eof.URL, 0, "headers: the server closed the connection before answering (EOF) [connection_reset]"},
		{"timeout", slow.URL, 200 * time.Millisecond, "headers: deadline exceeded [deadline]"},
		{"tls", tlsSrv.URL, 0, "tls: x509: certificate signed by unknown authority"},
	} {
		t.Run(c.name, func(t *testing.T) {
			target := testkit.Target(c.url, config.APIChat)
			if c.timeout > 0 {
				target.Timeout = config.Duration(c.timeout)
			}
			res := probeOnce(t, target, testkit.Scenario())
			got := res.FailureText()
			if !strings.HasPrefix(got, c.want) {
				t.Errorf("failure text %q, want %q", got, c.want)
			}
			if c.name == "tls" && !strings.HasSuffix(got, "[tls_error]") {
				t.Errorf("failure text %q, want the code tls_error", got)
			}
			for _, wrapper := range []string{`Post "`, "dial tcp", "connect: connect:", "read tcp"} {
				if strings.Contains(got, wrapper) {
					t.Errorf("failure text %q repeats Go's wrapper %q", got, wrapper)
				}
			}
			if line := string(res.Outcome) + ": " + got; !strings.Contains(logOf(res), line) {
				t.Errorf("the log does not say %q:\n%s", line, logOf(res))
			}
		})
	}
}
