package transport

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"
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
