package transport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http/httptrace"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Phases of a request the transport sees: where a request that got no
// answer failed, and the steps of Timings.
const (
	PhaseDNS     = "dns"
	PhaseConnect = "connect"
	PhaseTLS     = "tls"
	PhaseRequest = "request" // writing the request
	PhaseHeaders = "headers" // waiting for the response headers
)

// Reasons are the bounded codes of why a request got no answer, safe as a
// label.
const (
	ReasonRefused   = "connection_refused"
	ReasonReset     = "connection_reset"
	ReasonDNS       = "dns_error"
	ReasonTLS       = "tls_error"
	ReasonRedirect  = "redirect_loop"
	ReasonDeadline  = "deadline"
	ReasonCancelled = "cancelled"
	ReasonOther     = "other"
)

// Reasons lists every reason, for documentation and label bounds.
var Reasons = []string{ReasonRefused, ReasonReset, ReasonDNS, ReasonTLS, ReasonRedirect, ReasonDeadline, ReasonCancelled, ReasonOther}

// Timings are the network phases of a request, as httptrace saw them. A
// phase that did not happen (a reused connection needs no DNS, connect or
// TLS) is zero.
type Timings struct {
	DNS, Connect, TLS time.Duration
	// FirstByte is from the request written to the first byte of the
	// response: the server's time to answer with headers.
	FirstByte time.Duration
	// Wrote is from t_sched to the request written whole; TTFB from t_sched
	// to the first byte of the response.
	Wrote, TTFB time.Duration
	// ConnReused is a connection that had already carried a response;
	// OtherDial one dialled for another request (reused, or dialled for one
	// that gave up on it): DNS, Connect and TLS are then zero.
	ConnReused, OtherDial bool
	// Retry is why the request was sent a second time (RetryReasons), ""
	// when it was sent once; the phases above are the second attempt's.
	Retry string
	// CertExpiry is the earliest NotAfter of the certificate chain the
	// response came over; zero without TLS or without a response.
	CertExpiry time.Time
}

// Tracer records the phases of one request. The transport calls it from
// its own goroutines, hence the lock.
type Tracer struct {
	sched time.Time

	mu                               sync.Mutex
	dnsStart, connectStart, tlsStart time.Time
	dnsDone                          bool
	dnsErr                           error
	gotConn, wrote, firstByte        bool
	wroteAt, firstByteAt             time.Time
	dns, connect, tls, sinceWrite    time.Duration
	reused, otherDial                bool
	conn                             string // the ledger's key of the connection used
	retry                            string
}

// NewTracer records a request due at sched: its Timings count from there.
func NewTracer(sched time.Time) *Tracer { return &Tracer{sched: sched} }

// Context is ctx with the tracer listening to the requests made with it.
func (tr *Tracer) Context(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(context.WithValue(ctx, tracerKey{}, tr), tr.trace())
}

func (tr *Tracer) trace() *httptrace.ClientTrace {
	locked := func(f func()) { tr.mu.Lock(); f(); tr.mu.Unlock() }
	return &httptrace.ClientTrace{
		DNSStart: func(httptrace.DNSStartInfo) { locked(func() { tr.dnsStart = time.Now() }) },
		DNSDone: func(info httptrace.DNSDoneInfo) {
			locked(func() { tr.dnsDone, tr.dnsErr, tr.dns = true, info.Err, time.Since(tr.dnsStart) })
		},
		ConnectStart: func(string, string) { locked(func() { tr.connectStart = time.Now() }) },
		ConnectDone: func(string, string, error) {
			locked(func() { tr.connect = time.Since(tr.connectStart) })
		},
		TLSHandshakeStart: func() { locked(func() { tr.tlsStart = time.Now() }) },
		TLSHandshakeDone:  func(tls.ConnectionState, error) { locked(func() { tr.tls = time.Since(tr.tlsStart) }) },
		GotConn:           func(info httptrace.GotConnInfo) { locked(func() { tr.gotConnection(info) }) },
		WroteRequest: func(httptrace.WroteRequestInfo) {
			locked(func() { tr.wrote, tr.wroteAt = true, time.Now() })
		},
		GotFirstResponseByte: func() {
			locked(func() {
				if !tr.firstByte && tr.conn != "" {
					dialled.responded(tr.conn)
				}
				tr.firstByte, tr.firstByteAt = true, time.Now()
				if !tr.wroteAt.IsZero() {
					tr.sinceWrite = tr.firstByteAt.Sub(tr.wroteAt)
				}
			})
		},
	}
}

// gotConnection notes the connection the request goes out on: reused when
// it already carried a response. One dialled for another request (from
// the pool, or handed over while this request's own dial ran) costs this
// request no DNS, connect or TLS, whatever its own dial took meanwhile.
func (tr *Tracer) gotConnection(info httptrace.GotConnInfo) {
	tr.gotConn, tr.reused, tr.otherDial = true, info.Reused, info.Reused || info.WasIdle
	if info.Conn == nil {
		return
	}
	tr.conn = connKey(info.Conn)
	if e, known := dialled.lookup(tr.conn); known {
		tr.reused, tr.otherDial = e.served > 0, e.by != tr
	}
}

// Timings are the phases seen so far.
func (tr *Tracer) Timings() Timings {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	t := Timings{DNS: tr.dns, Connect: tr.connect, TLS: tr.tls, FirstByte: tr.sinceWrite, ConnReused: tr.reused, OtherDial: tr.otherDial, Retry: tr.retry}
	if tr.otherDial {
		t.DNS, t.Connect, t.TLS = 0, 0, 0
	}
	if tr.wrote {
		t.Wrote = tr.wroteAt.Sub(tr.sched)
	}
	if tr.firstByte {
		t.TTFB = tr.firstByteAt.Sub(tr.sched)
	}
	return t
}

// Failed sorts err, a request's failure before its answer, into where
// (the phase its kind names, else where the trace stood) and why.
func (tr *Tracer) Failed(ctx context.Context, err error) (phase, reason string) {
	reason = Reason(ctx, err)
	switch reason {
	case ReasonDNS:
		return PhaseDNS, reason
	case ReasonRefused:
		return PhaseConnect, reason
	case ReasonTLS:
		return PhaseTLS, reason
	case ReasonRedirect:
		return PhaseHeaders, reason
	}
	return tr.phase(), reason
}

// phase is where a request that failed before its response stood.
func (tr *Tracer) phase() string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	switch {
	case tr.wrote || tr.firstByte:
		return PhaseHeaders
	case tr.gotConn:
		return PhaseRequest
	case !tr.tlsStart.IsZero():
		return PhaseTLS
	case !tr.connectStart.IsZero():
		return PhaseConnect
	case !tr.dnsStart.IsZero() && (!tr.dnsDone || tr.dnsErr != nil):
		return PhaseDNS
	}
	return PhaseConnect
}

// Reason sorts a transport error: a passed deadline, llmprobe's own
// cancel, or what broke the connection (refused, reset, DNS, TLS,
// redirects).
func Reason(ctx context.Context, err error) string {
	var dnsErr *net.DNSError
	var netErr net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		return ReasonDeadline
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return ReasonCancelled
	case errors.Is(err, syscall.ECONNREFUSED):
		return ReasonRefused
	case errors.As(err, &dnsErr):
		return ReasonDNS
	case isTLSError(err):
		return ReasonTLS
	case strings.Contains(err.Error(), "stopped after") && strings.Contains(err.Error(), "redirects"):
		return ReasonRedirect
	case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.EPIPE),
		// The transport closed the connection on the server's close while
		// it still wrote a long body, and reports that write.
		errors.Is(err, net.ErrClosed),
		// The server closed a kept-alive connection as the request went out
		// on it: the same event as an EOF, under the same reason.
		closedIdle(err):
		return ReasonReset
	}
	return ReasonOther
}

func isTLSError(err error) bool {
	var (
		unknown  x509.UnknownAuthorityError
		invalid  x509.CertificateInvalidError
		hostname x509.HostnameError
		verify   *tls.CertificateVerificationError
		record   tls.RecordHeaderError
		alert    tls.AlertError
	)
	return errors.As(err, &unknown) || errors.As(err, &invalid) || errors.As(err, &hostname) ||
		errors.As(err, &verify) || errors.As(err, &record) || errors.As(err, &alert)
}

// CertExpiry is the earliest NotAfter of a TLS connection's peer chain.
func CertExpiry(cs *tls.ConnectionState) time.Time {
	var earliest time.Time
	if cs == nil {
		return earliest
	}
	for _, c := range cs.PeerCertificates {
		if earliest.IsZero() || c.NotAfter.Before(earliest) {
			earliest = c.NotAfter
		}
	}
	return earliest
}
