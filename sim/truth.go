// The sim's truth stamps: per request, when the engine wrote each output chunk
// and when it accepted and read the request, for benchmarks that measure the
// prober's timing error.

package sim

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"sync"
	"time"
)

// truthLog keeps, per request, the wall-clock times the engine wrote each
// output chunk to the connection, and when it accepted the request's
// connection and read the request: the truth a benchmark measures the
// prober's timing against, with the engine's own delay in receiving told
// apart. It is bounded; past maxTruthRequests requests it drops new ones and
// counts them.
type truthLog struct {
	mu       sync.Mutex
	stamps   map[string][]int64
	received map[string]Receipt
	dropped  int
}

// newTruthLog is an empty truthLog.
func newTruthLog() *truthLog {
	return &truthLog{stamps: map[string][]int64{}, received: map[string]Receipt{}}
}

// Receipt is when the engine accepted a request's connection (the same for
// every request on a kept-alive one) and when it had read the request
// whole, in Unix nanoseconds.
type Receipt struct {
	Accepted int64 `json:"accepted"`
	Read     int64 `json:"read"`
}

type acceptedKey struct{}

// StampAccept is a server's ConnContext: it notes when the connection was
// accepted, for the receipts of the requests that come over it.
func StampAccept(ctx context.Context, _ net.Conn) context.Context {
	return context.WithValue(ctx, acceptedKey{}, truthNow())
}

// ReceiptOf is r's receipt, read now; 0 where its connection was not
// stamped (a server without StampAccept).
func ReceiptOf(r *http.Request) Receipt {
	accepted, _ := r.Context().Value(acceptedKey{}).(int64)
	return Receipt{Accepted: accepted, Read: truthNow()}
}

const maxTruthRequests = 1 << 20

// TruthRecord is what GET /sim/truth returns: per request id (the client's
// X-Request-Id, else the response id), the Unix nanoseconds at which each
// output chunk was handed to the connection, and the request's receipt.
type TruthRecord struct {
	Stamps   map[string][]int64 `json:"stamps"`
	Received map[string]Receipt `json:"received"`
	Dropped  int                `json:"dropped"`
}

// Keep records request id's stamps and receipt.
func (t *truthLog) Keep(id string, stamps []int64, rc Receipt) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.stamps) >= maxTruthRequests {
		t.dropped++
		return
	}
	t.stamps[id], t.received[id] = stamps, rc
}

// drain hands back everything recorded so far and forgets it.
func (t *truthLog) drain() TruthRecord {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := TruthRecord{Stamps: t.stamps, Received: t.received, Dropped: t.dropped}
	t.stamps, t.received, t.dropped = map[string][]int64{}, map[string]Receipt{}, 0
	return out
}

// Serve answers GET /sim/truth: everything recorded since the last call.
func (t *truthLog) Serve(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(t.drain())
}

// Now is the wall clock in Unix nanoseconds: comparable across processes
// on one host, unlike the monotonic clock.
func truthNow() int64 { return time.Now().UnixNano() }
