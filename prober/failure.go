package prober

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

// Phases of a request: where a failure happened, and the steps of Timings.
const (
	phaseDiscovery = "discovery" // finding the model on /v1/models
	phaseDNS       = "dns"
	phaseConnect   = "connect"
	phaseTLS       = "tls"
	phaseRequest   = "request" // writing the request
	phaseHeaders   = "headers" // waiting for the response headers
	phaseStream    = "stream"  // reading the streamed body
)

// reasons are the bounded codes of why a request failed, safe as a label.
const (
	reasonRefused        = "connection_refused"
	reasonReset          = "connection_reset"
	reasonDNS            = "dns_error"
	reasonTLS            = "tls_error"
	reasonRedirect       = "redirect_loop"
	reasonDeadline       = "deadline"
	reasonCancelled      = "cancelled"
	reasonHTTPStatus     = "http_status"
	reasonNotEventStream = "not_event_stream"
	reasonMalformed      = "malformed_chunk"
	reasonErrorInStream  = "error_in_stream"
	reasonStreamCut      = "stream_cut"
	reasonNoFinish       = "no_finish"
	reasonLineTooLong    = "line_too_long"
	reasonNoOutput       = "no_output"
	reasonMaxTokens      = "max_tokens_exceeded"
	reasonOther          = "other"
)

// reasons lists every reason, for documentation and label bounds.
var reasons = []string{reasonRefused, reasonReset, reasonDNS, reasonTLS, reasonRedirect, reasonDeadline, reasonCancelled,
	reasonHTTPStatus, reasonNotEventStream, reasonMalformed, reasonErrorInStream, reasonStreamCut, reasonNoFinish,
	reasonLineTooLong, reasonNoOutput, reasonMaxTokens, reasonOther}

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
	ConnReused  bool
	// CertExpiry is the earliest NotAfter of the certificate chain the
	// response came over; zero without TLS or without a response.
	CertExpiry time.Time
}

// tracer records the phases of one request. The transport calls it from
// its own goroutines, hence the lock.
type tracer struct {
	sched time.Time

	mu                               sync.Mutex
	dnsStart, connectStart, tlsStart time.Time
	dnsDone                          bool
	dnsErr                           error
	gotConn, wrote, firstByte        bool
	wroteAt, firstByteAt             time.Time
	dns, connect, tls, sinceWrite    time.Duration
	reused                           bool
}

func (tr *tracer) trace() *httptrace.ClientTrace {
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
		GotConn:           func(info httptrace.GotConnInfo) { locked(func() { tr.gotConn, tr.reused = true, info.Reused }) },
		WroteRequest: func(httptrace.WroteRequestInfo) {
			locked(func() { tr.wrote, tr.wroteAt = true, time.Now() })
		},
		GotFirstResponseByte: func() {
			locked(func() {
				tr.firstByte, tr.firstByteAt = true, time.Now()
				if !tr.wroteAt.IsZero() {
					tr.sinceWrite = tr.firstByteAt.Sub(tr.wroteAt)
				}
			})
		},
	}
}

func (tr *tracer) timings() Timings {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	t := Timings{DNS: tr.dns, Connect: tr.connect, TLS: tr.tls, FirstByte: tr.sinceWrite, ConnReused: tr.reused}
	if tr.wrote {
		t.Wrote = tr.wroteAt.Sub(tr.sched)
	}
	if tr.firstByte {
		t.TTFB = tr.firstByteAt.Sub(tr.sched)
	}
	return t
}

// phase is where a request that failed before its response stood.
func (tr *tracer) phase() string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	switch {
	case tr.wrote || tr.firstByte:
		return phaseHeaders
	case tr.gotConn:
		return phaseRequest
	case !tr.tlsStart.IsZero():
		return phaseTLS
	case !tr.connectStart.IsZero():
		return phaseConnect
	case !tr.dnsStart.IsZero() && (!tr.dnsDone || tr.dnsErr != nil):
		return phaseDNS
	}
	return phaseConnect
}

// classify sorts a transport error into an outcome and a reason: a passed
// deadline is a timeout, llmprobe's own cancel is cancelled, anything else
// (refused, reset, DNS, TLS, redirects) a connection error.
func classify(ctx context.Context, err error) (Outcome, string) {
	var dnsErr *net.DNSError
	var netErr net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		return OutcomeTimeout, reasonDeadline
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return OutcomeCancelled, reasonCancelled
	case errors.Is(err, syscall.ECONNREFUSED):
		return OutcomeConnectionError, reasonRefused
	case errors.As(err, &dnsErr):
		return OutcomeConnectionError, reasonDNS
	case isTLSError(err):
		return OutcomeConnectionError, reasonTLS
	case strings.Contains(err.Error(), "stopped after") && strings.Contains(err.Error(), "redirects"):
		return OutcomeConnectionError, reasonRedirect
	case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.EPIPE),
		// The transport closed the connection on the server's close while
		// it still wrote a long body, and reports that write.
		errors.Is(err, net.ErrClosed):
		return OutcomeConnectionError, reasonReset
	}
	return OutcomeConnectionError, reasonOther
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

// certExpiry is the earliest NotAfter of a TLS connection's peer chain.
func certExpiry(cs *tls.ConnectionState) time.Time {
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
