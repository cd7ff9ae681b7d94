package target

import (
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"golang.org/x/time/rate"

	"github.com/llmprobe/llmprobe/prober"
)

// State is what the requests to a target said last.
type State struct {
	// Up is whether the last finished request succeeded; meaningful once
	// Last is set.
	Up bool
	// Since is when Up last changed.
	Since time.Time
	// Last is the last finished request (canary or burst), nil before one.
	Last *prober.Result
	// CertExpiry is the earliest NotAfter of the certificate chain of the
	// last response over TLS; it stays while the target does not answer.
	CertExpiry time.Time
	// Dimension is the vector length of the last successful embeddings
	// answer; 0 before one.
	Dimension int
}

// health follows a target's state and logs its changes: up to down and
// back, and each new kind of failure while down. A few changes in a row are
// all logged; a target that keeps flapping gets one line per 30 s, and the
// changes in between are counted into the next line.
type health struct {
	mu         sync.Mutex
	state      State
	kinds      map[string]bool // failure kinds seen since the target went down
	lines      *rate.Limiter
	suppressed int
	flow       flow
}

func newHealth(now time.Time) *health {
	return &health{lines: rate.NewLimiter(rate.Every(30*time.Second), 3), flow: flow{since: now}}
}

func (h *health) snapshot() State {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state
}

// observe takes a finished request of the target.
func (h *health) observe(r *prober.Result, logger log.Logger, now time.Time) {
	if r.Outcome == prober.OutcomeCancelled {
		return // llmprobe stopped it: nothing about the target
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.flow.observe(r, now)
	prev := h.state
	h.state.Last = r
	if !r.Timings.CertExpiry.IsZero() {
		h.state.CertExpiry = r.Timings.CertExpiry
	}
	if r.Dimension > 0 {
		h.state.Dimension = r.Dimension
	}
	up := r.Outcome == prober.OutcomeSuccess
	changed := prev.Last == nil || prev.Up != up
	if changed {
		h.state.Up, h.state.Since = up, now
	}
	kind := string(r.Outcome) + "/" + r.Phase + "/" + r.Reason
	newKind := !up && !h.kinds[kind]
	switch {
	case up:
		h.kinds = nil
	case changed:
		h.kinds = map[string]bool{kind: true}
	case newKind:
		h.kinds[kind] = true
	}
	if !changed && !newKind {
		return
	}
	if !h.lines.AllowN(now, 1) {
		h.suppressed++
		return
	}
	kv := []any{"target", r.Target, "scenario", r.Scenario, "traffic", r.Traffic}
	if h.suppressed > 0 {
		kv = append(kv, "changes_not_logged", h.suppressed)
	}
	h.suppressed = 0
	switch {
	case up && prev.Last == nil:
		level.Info(logger).Log(append([]any{"msg", "target up"}, kv...)...)
	case up:
		level.Info(logger).Log(append([]any{"msg", "target up again", "down_for", now.Sub(prev.Since).Round(time.Second)}, kv...)...)
	case changed:
		level.Warn(logger).Log(append([]any{"msg", "target down", "outcome", r.Outcome, "phase", r.Phase, "reason", r.Reason, "status", r.HTTPStatus, "err", r.Error}, kv...)...)
	default:
		level.Warn(logger).Log(append([]any{"msg", "target failing in a new way", "outcome", r.Outcome, "phase", r.Phase, "reason", r.Reason, "status", r.HTTPStatus, "err", r.Error}, kv...)...)
	}
}
