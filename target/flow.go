package target

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/enginemetrics"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/prober/transport"
)

// flow is what a target's requests said of whether its engine produces
// tokens: when a request last got one, when one last reached the engine
// and got none, and when one last failed before the engine.
type flow struct {
	since        time.Time // when llmprobe began to follow the target
	lastToken    time.Time
	lastNoToken  time.Time
	noToken      int // requests that reached the engine and got no token, since the last token
	noTokenWhy   string
	lastRefused  time.Time // the engine answered 429 or 503: overloaded, not hung
	lastOwnFault time.Time
	ownFaultWhy  string
}

// observe files a finished request: a token (or any answer, for APIs
// without tokens), no token from an engine it reached, or a failure before
// the engine (DNS, connect, TLS, writing the request, credentials).
func (f *flow) observe(r *prober.Result, now time.Time) {
	switch {
	case r.Outcome == prober.OutcomeSuccess || r.FirstTokenSeen() || r.OutputTokens > 0:
		f.lastToken, f.noToken = now, 0
	case r.Outcome == prober.OutcomeRejected:
		f.lastRefused = now
	case beforeEngine(r):
		f.lastOwnFault, f.ownFaultWhy = now, r.FailureText()
	default:
		f.lastNoToken, f.noTokenWhy = now, r.FailureText()
		f.noToken++
	}
}

// beforeEngine: the request never reached the engine's generation, through
// no fault of the engine's: it was not delivered, or it was refused for
// its credentials.
func beforeEngine(r *prober.Result) bool {
	switch r.Phase {
	case transport.PhaseDNS, transport.PhaseConnect, transport.PhaseTLS, transport.PhaseRequest, "discovery":
		return true
	}
	switch r.HTTPStatus {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusProxyAuthRequired, http.StatusNotFound:
		return true
	}
	return false
}

// TokenFlow is a target's health check: whether its engine produces
// tokens. Unhealthy only when requests reached the engine within the window
// and none got a token, the engine not merely queueing.
type TokenFlow struct {
	Healthy bool
	// Reason says why, in words; Warnings what a person should look at
	// though the engine is healthy.
	Reason   string
	Warnings []string
}

// TokenFlowOptions are the health check's window and startup grace.
type TokenFlowOptions struct {
	Window, Grace time.Duration
}

// TokenFlow judges the named target's token flow at now; false when no
// such target is configured.
func (t *Set) TokenFlow(name string, now time.Time, o TokenFlowOptions) (TokenFlow, bool) {
	t.mu.Lock()
	h := t.health[name]
	mc := t.clients[name]
	t.mu.Unlock()
	if h == nil {
		return TokenFlow{}, false
	}
	h.mu.Lock()
	f := h.flow
	h.mu.Unlock()
	waiting := -1.0
	if mc != nil && mc.engine != nil {
		if g, ok := mc.engine.get().Window.Gauge(enginemetrics.GaugeWaiting); ok {
			for _, v := range []*float64{g.Max, g.After, g.Before} {
				if v != nil {
					waiting = max(waiting, *v)
				}
			}
		}
	}
	return f.judge(now, o, waiting), true
}

// judge is the rule; waiting is the engine's largest waiting queue in its
// last metrics window, -1 when unknown.
func (f flow) judge(now time.Time, o TokenFlowOptions, waiting float64) TokenFlow {
	from := now.Add(-o.Window)
	in := func(t time.Time) bool { return !t.IsZero() && !t.Before(from) }
	ago := func(t time.Time) string { return now.Sub(t).Round(time.Second).String() + " ago" }
	var out TokenFlow
	if in(f.lastOwnFault) {
		out.Warnings = append(out.Warnings, fmt.Sprintf("llmprobe's own requests failed before the engine (%s, %s): fix llmprobe's side; the engine is not judged on them", f.ownFaultWhy, ago(f.lastOwnFault)))
	}
	queueing := waiting > 0 || in(f.lastRefused)
	switch {
	case now.Sub(f.since) < o.Grace:
		out.Healthy, out.Reason = true, fmt.Sprintf("starting: within the startup grace (%s of %s)", now.Sub(f.since).Round(time.Second), o.Grace)
	case in(f.lastToken):
		out.Healthy, out.Reason = true, "tokens flow: the last token "+ago(f.lastToken)
	case !in(f.lastNoToken):
		out.Healthy, out.Reason = true, fmt.Sprintf("no request reached the engine in the last %s: nothing to judge", o.Window)
	case queueing:
		out.Healthy, out.Reason = true, "the engine is queueing, not hung"
		out.Warnings = append(out.Warnings, fmt.Sprintf("%d requests reached the engine and got no token (the last %s: %s), while %s", f.noToken, ago(f.lastNoToken), f.noTokenWhy, queueText(waiting, in(f.lastRefused))))
	default:
		out.Reason = fmt.Sprintf("no token flows: %d requests reached the engine since the last token (%s) and got none; the last %s: %s", f.noToken, sinceText(f.lastToken, now), ago(f.lastNoToken), f.noTokenWhy)
	}
	return out
}

func queueText(waiting float64, refused bool) string {
	var parts []string
	if waiting > 0 {
		parts = append(parts, fmt.Sprintf("the engine reports %g requests waiting", waiting))
	}
	if refused {
		parts = append(parts, "the engine refused requests as overloaded (429 or 503)")
	}
	return strings.Join(parts, " and ")
}

func sinceText(t, now time.Time) string {
	if t.IsZero() {
		return "none since llmprobe began to follow the target"
	}
	return now.Sub(t).Round(time.Second).String() + " ago"
}
