package prober

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"

	"github.com/llmprobe/llmprobe/prober/transport"
)

// Phases of a request besides the transport's (dns, connect, tls, request,
// headers): where a failure happened.
const (
	phaseDiscovery = "discovery" // finding the model on /v1/models
	phaseStream    = "stream"    // reading the streamed body
)

// Reasons of a failure in the answer, besides the transport's: the
// bounded codes of why a request failed, safe as a label.
const (
	reasonHTTPStatus     = "http_status"
	reasonNotEventStream = "not_event_stream"
	reasonMalformed      = "malformed_chunk"
	reasonErrorInStream  = "error_in_stream"
	reasonStreamCut      = "stream_cut"
	reasonNoFinish       = "no_finish"
	reasonLineTooLong    = "line_too_long"
	reasonNoOutput       = "no_output"
	reasonMaxTokens      = "max_tokens_exceeded"
)

// reasonContentEncoding is a body compressed in an encoding llmprobe does
// not decode.
const reasonContentEncoding = "content_encoding"

// reasons lists every reason, for documentation and label bounds.
var reasons = append([]string{reasonHTTPStatus, reasonNotEventStream, reasonContentEncoding, reasonMalformed, reasonErrorInStream, reasonStreamCut, reasonNoFinish,
	reasonLineTooLong, reasonNoOutput, reasonMaxTokens, reasonEngineAbort}, slices.Concat(wholeReasons, pooledReasons, []string{reasonTranscriptNotJSON, reasonTranscriptEmpty}, transport.Reasons)...)

// outcomeOfTransport sorts a request that got no answer: a passed deadline
// is a timeout, llmprobe's own cancel is cancelled, anything else (refused,
// reset, DNS, TLS, redirects) a connection error.
func outcomeOfTransport(reason string) Outcome {
	switch reason {
	case transport.ReasonDeadline:
		return OutcomeTimeout
	case transport.ReasonCancelled:
		return OutcomeCancelled
	}
	return OutcomeConnectionError
}

// outcomeOfStatus sorts a non-200 answer: 429 and 503 are overload
// (rejected), which must never look fast; anything else an HTTP error.
func outcomeOfStatus(status int) Outcome {
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		return OutcomeRejected
	}
	return OutcomeHTTPError
}

// failDiscovery classifies a failure to find the model: the HTTP status of
// /v1/models when it answered, the transport error when it did not.
func (res *Result) failDiscovery(ctx context.Context, err error) {
	var se *infoStatusError
	if errors.As(err, &se) {
		res.HTTPStatus = se.Status
		res.Body = se.Excerpt
		res.fail(outcomeOfStatus(se.Status), phaseDiscovery, reasonHTTPStatus, err.Error())
		return
	}
	reason := transport.Reason(ctx, err)
	outcome := outcomeOfTransport(reason)
	if reason == transport.ReasonOther && errors.Is(err, errNoModel) {
		outcome = OutcomeHTTPError
	}
	msg := err.Error()
	if _, ok := errors.AsType[*url.Error](err); ok {
		msg = "GET /v1/models: " + transport.Describe(err)
	}
	res.fail(outcome, phaseDiscovery, reason, msg)
}

func (res *Result) fail(o Outcome, phase, reason, msg string) {
	res.Outcome, res.Phase, res.Reason = o, phase, reason
	res.Error = truncate(msg, maxErrorText)
	res.Note("%s: %s", o, res.FailureText())
}
