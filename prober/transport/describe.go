package transport

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"syscall"
)

// Describe is a transport error in the words that matter: what broke, and
// the address it broke at. The wrappers of url.Error ("Post \"…\": ") and
// net.OpError ("dial tcp …: connect: ") are left out: they repeat the
// request and the phase that the failure already names.
func Describe(err error) string {
	var (
		opErr  *net.OpError
		dnsErr *net.DNSError
		errno  syscall.Errno
	)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline exceeded"
	case errors.Is(err, context.Canceled):
		return "cancelled by llmprobe"
	case closedIdle(err):
		return "the server closed the kept-alive connection before answering"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection ended inside the response (unexpected EOF)"
	case errors.Is(err, io.EOF):
		return "the server closed the connection before answering (EOF)"
	case errors.As(err, &dnsErr):
		return dnsErr.Error()
	case isTLSError(err):
		return innermost(err).Error()
	case errors.As(err, &opErr) && opErr.Addr != nil:
		return innermost(opErr).Error() + " (" + opErr.Addr.String() + ")"
	case errors.As(err, &opErr):
		return innermost(opErr).Error()
	case errors.As(err, &errno):
		return errno.Error()
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return urlErr.Err.Error()
	}
	return err.Error()
}

// innermost is the last error of err's chain.
func innermost(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}
