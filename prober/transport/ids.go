package transport

import (
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
)

// NewRequestID is 128 random bits in hex, the shape of a W3C trace id:
// unique across replicas and restarts without coordination.
func NewRequestID() string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], rand.Uint64())
	binary.BigEndian.PutUint64(b[8:], rand.Uint64())
	return hex.EncodeToString(b[:])
}

// TraceParent is a W3C traceparent (version 00, sampled) whose trace id is
// the request id and whose parent span id is fresh, never all zero.
func TraceParent(requestID string) string {
	span := rand.Uint64() | 1
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], span)
	return "00-" + requestID + "-" + hex.EncodeToString(b[:]) + "-01"
}
