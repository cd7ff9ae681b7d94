package sim

import (
	"net/http"
	"sync"
	"time"
)

// truthLog keeps, per request, the wall-clock times the engine wrote each
// output chunk to the connection: the truth a benchmark measures the
// prober's timing against. It is bounded; past maxTruthRequests requests it
// drops new ones and counts them.
type truthLog struct {
	mu      sync.Mutex
	stamps  map[string][]int64
	dropped int
}

const maxTruthRequests = 1 << 20

// TruthRecord is what GET /sim/truth returns: per request id (the client's
// X-Request-Id, else the response id), the Unix nanoseconds at which each
// output chunk was handed to the connection.
type TruthRecord struct {
	Stamps  map[string][]int64 `json:"stamps"`
	Dropped int                `json:"dropped"`
}

func (t *truthLog) keep(id string, stamps []int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.stamps) >= maxTruthRequests {
		t.dropped++
		return
	}
	t.stamps[id] = stamps
}

// drain hands back everything recorded so far and forgets it.
func (t *truthLog) drain() TruthRecord {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := TruthRecord{Stamps: t.stamps, Dropped: t.dropped}
	t.stamps, t.dropped = map[string][]int64{}, 0
	return out
}

func (t *truthLog) serve(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, t.drain())
}

// stampNow is the wall clock in Unix nanoseconds: comparable across
// processes on one host, unlike the monotonic clock.
func stampNow() int64 { return time.Now().UnixNano() }
