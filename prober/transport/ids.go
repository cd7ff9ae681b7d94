package transport

import (
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
)

// NewRequestID is a request's X-Request-Id, 128 random bits in hex, the
// shape of a W3C trace id: unique across replicas and restarts without
// coordination; and its traceparent header, whose trace id it is. sample,
// when not nil, decides from the id whether the request's span is exported
// (its traceparent then says sampled); nil sends every request as sampled,
// so engines that follow their caller keep their own spans.
func NewRequestID(sample func(traceID string) bool) (id, traceparent string) {
	id = requestID()
	return id, traceParent(id, sample == nil || sample(id))
}

func requestID() string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], rand.Uint64())
	binary.BigEndian.PutUint64(b[8:], rand.Uint64())
	return hex.EncodeToString(b[:])
}

// traceParent is a W3C traceparent (version 00) whose trace id is the
// request id and whose parent span id is fresh, never all zero: the id of
// the client span llmprobe exports for the request when sampled.
func traceParent(requestID string, sampled bool) string {
	span := rand.Uint64() | 1
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], span)
	flags := "-00"
	if sampled {
		flags = "-01"
	}
	return "00-" + requestID + "-" + hex.EncodeToString(b[:]) + flags
}

// ParseTraceParent splits a traceparent this package wrote into its trace
// id, parent span id and sampled flag; ok is false for any other text.
func ParseTraceParent(tp string) (traceID [16]byte, spanID [8]byte, sampled, ok bool) {
	if len(tp) != 55 || tp[:3] != "00-" || tp[35] != '-' || tp[52] != '-' {
		return traceID, spanID, false, false
	}
	if _, err := hex.Decode(traceID[:], []byte(tp[3:35])); err != nil {
		return traceID, spanID, false, false
	}
	if _, err := hex.Decode(spanID[:], []byte(tp[36:52])); err != nil {
		return traceID, spanID, false, false
	}
	return traceID, spanID, tp[53:] == "01", true
}
