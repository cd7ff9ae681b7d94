package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	promconfig "github.com/prometheus/common/config"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
)

// One event, one reason: a server closing a kept-alive connection under a
// request shows as EOF or as "server closed idle connection" depending on
// when the transport noticed; both are connection_reset, both are described
// without Go's wrappers, and both earn a retry on a reused connection
// before any response byte, and on nothing else.
func TestClosedConnectionIsOneReason(t *testing.T) {
	post := func(err error) error { return &url.Error{Op: "Post", URL: "http://h:1/v1/chat/completions", Err: err} }
	reset := &net.OpError{Op: "read", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}, Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	for _, c := range []struct {
		err         error
		retry, text string
	}{
		{post(io.EOF), RetryEOF, "the server closed the connection before answering (EOF)"},
		{post(errors.New("http: server closed idle connection")), RetryClosedIdle, "the server closed the kept-alive connection before answering"},
		{post(reset), RetryReset, "connection reset by peer (127.0.0.1:8080)"},
		{post(fmt.Errorf("net/http: HTTP/1.x transport connection broken: %w", os.NewSyscallError("write", syscall.EPIPE))), RetryReset, "broken pipe"},
	} {
		if r := Reason(t.Context(), c.err); r != ReasonReset {
			t.Errorf("%v: reason %s, want %s", c.err, r, ReasonReset)
		}
		if d := Describe(c.err); d != c.text {
			t.Errorf("%v: described as %q, want %q", c.err, d, c.text)
		}
		reused := NewTracer(time.Now())
		reused.reused = true
		if r := reused.retryReason(c.err); r != c.retry {
			t.Errorf("%v on a reused connection: retry %q, want %q", c.err, r, c.retry)
		}
		answered := NewTracer(time.Now())
		answered.reused, answered.firstByte = true, true
		if r := answered.retryReason(c.err); r != "" {
			t.Errorf("%v after a response byte: retry %q, want none", c.err, r)
		}
		if r := NewTracer(time.Now()).retryReason(c.err); r != "" {
			t.Errorf("%v on a new connection: retry %q, want none", c.err, r)
		}
	}
	refused := NewTracer(time.Now())
	refused.reused = true
	if r := refused.retryReason(post(syscall.ECONNREFUSED)); r != "" {
		t.Errorf("a refused connection: retry %q, want none", r)
	}
}

// A request sent again goes through the fresh twins, which keep no
// connection (it asks the server to close it) and guard credentials as the
// kept ones do: the target's on its host, none on a redirect elsewhere.
func TestFreshTransportsGuardCredentials(t *testing.T) {
	seen := make(chan *http.Request, 2)
	other := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { seen <- r }))
	defer other.Close()
	own := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r
		http.Redirect(w, r, other.URL, http.StatusTemporaryRedirect)
	}))
	defer own.Close()
	target := testkit.Target(own.URL, config.APIChat)
	target.HTTPClientConfig.Authorization = &promconfig.Authorization{Type: "Bearer", Credentials: "sk-0123456789"}
	hc, err := NewClient(target)
	if err != nil {
		t.Fatal(err)
	}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequestWithContext(context.WithValue(t.Context(), freshConn{}, true), http.MethodGet, own.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	first, second := <-seen, <-seen
	if first.Header.Get("Authorization") != "Bearer sk-0123456789" || !first.Close {
		t.Errorf("the target's host got Authorization %q, close %v; want the credentials, and the connection closed after", first.Header.Get("Authorization"), first.Close)
	}
	if second.Header.Get("Authorization") != "" || !second.Close {
		t.Errorf("the other host got Authorization %q, close %v; want none, and the connection closed after", second.Header.Get("Authorization"), second.Close)
	}
}
