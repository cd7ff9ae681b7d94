package transport

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"syscall"
	"time"
)

// Why a request was sent a second time: the reused connection it went out
// on was closed by the server before any byte of the response. Bounded, safe
// as a label.
const (
	RetryEOF        = "eof"                // the connection ended
	RetryReset      = "connection_reset"   // reset or broken pipe
	RetryClosedIdle = "server_closed_idle" // closed while the transport held it idle
)

// RetryReasons lists every retry reason, for documentation and label bounds.
var RetryReasons = []string{RetryEOF, RetryReset, RetryClosedIdle}

// Send sends req through hc, and once more when it went out on a reused
// connection that the server had already closed: no byte of a response
// came, and the connection ended (EOF), was reset, or was closed while
// idle. Servers that close each connection after a streamed answer while
// advertising keep-alive (llama.cpp's server) race the next request this
// way. The second attempt goes out on a new connection. Go's transport
// retries such failures itself only for requests it deems idempotent, which
// a POST is not; an inference request has no effect a second copy could
// repeat, and this one most likely never reached the engine. The tracer
// keeps counting from t_sched, so the retry's delay is in every latency.
func (tr *Tracer) Send(hc *http.Client, req *http.Request) (*http.Response, error) {
	resp, err := hc.Do(req)
	if err == nil || req.GetBody == nil || req.Context().Err() != nil {
		return resp, err
	}
	reason := tr.retryReason(err)
	if reason == "" {
		return resp, err
	}
	body, berr := req.GetBody()
	if berr != nil {
		return resp, err
	}
	// On a connection of its own: under load the pool may hold more
	// connections the server is closing.
	again := req.Clone(context.WithValue(req.Context(), freshConn{}, true))
	again.Body = body
	tr.restart(reason)
	return hc.Do(again)
}

// restart forgets the failed attempt's phases, keeping t_sched, and notes
// why the request goes out again.
func (tr *Tracer) restart(reason string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.dnsStart, tr.connectStart, tr.tlsStart = time.Time{}, time.Time{}, time.Time{}
	tr.dnsDone, tr.dnsErr = false, nil
	tr.gotConn, tr.wrote, tr.firstByte = false, false, false
	tr.wroteAt, tr.firstByteAt = time.Time{}, time.Time{}
	tr.dns, tr.connect, tr.tls, tr.sinceWrite = 0, 0, 0, 0
	tr.reused, tr.retry = false, reason
}

// retryReason is why a failed attempt may be sent again, or "" when it may
// not: it went out on a new connection, or got a byte of an answer, or
// failed otherwise.
func (tr *Tracer) retryReason(err error) string {
	tr.mu.Lock()
	reused, answered := tr.reused, tr.firstByte
	tr.mu.Unlock()
	if !reused || answered {
		return ""
	}
	switch {
	case closedIdle(err):
		return RetryClosedIdle
	case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE):
		return RetryReset
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return RetryEOF
	}
	return ""
}

// closedIdle reports net/http's "server closed idle connection", which it
// does not export.
func closedIdle(err error) bool {
	return strings.Contains(err.Error(), "server closed idle connection")
}
