package transport

import (
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
)

// NewRequestID is a request's X-Request-Id, 128 random bits in hex, the
// shape of a W3C trace id: unique across replicas and restarts without
// coordination; and its traceparent header, whose trace id it is.
func NewRequestID() (id, traceparent string) {
	id = requestID()
	return id, traceParent(id)
}

func requestID() string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], rand.Uint64())
	binary.BigEndian.PutUint64(b[8:], rand.Uint64())
	return hex.EncodeToString(b[:])
}

// traceParent is a W3C traceparent (version 00, sampled) whose trace id is
// the request id and whose parent span id is fresh, never all zero.
func traceParent(requestID string) string {
	span := rand.Uint64() | 1
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], span)
	return "00-" + requestID + "-" + hex.EncodeToString(b[:]) + "-01"
}
