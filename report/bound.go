package report

import (
	"fmt"
	"time"

	"github.com/llmprobe/llmprobe/config"
)

// Tail is the top of a distribution of delays the client itself caused, in
// seconds. Without samples P99 and Max are null (n/a), never 0.
type Tail struct {
	Count uint64   `json:"count"`
	P99   *float64 `json:"p99"`
	Max   *float64 `json:"max"`
}

// RuntimeDelays is what the Go runtime recorded during a run: how long
// goroutines waited to run once runnable (the runtime tracks one transition
// in eight), and the stop-the-world GC pauses. Its histograms are cumulative,
// so these are the differences between the run's start and end; each
// figure is the upper bound of its bucket, never under the truth.
//
// ReadDelay is what a self-probe saw every couple of milliseconds: the
// time from writing a stamp into a loopback connection to an ordinary
// goroutine reading it, as a token's read goes. It sees what the runtime's
// histograms cannot: a host whose CPUs are busy with other processes, and
// goroutines queued behind a burst of chunks.
type RuntimeDelays struct {
	SchedLatency Tail `json:"sched_latency"`
	GCPause      Tail `json:"gc_pause"`
	ReadDelay    Tail `json:"read_delay"`
}

// ErrorBound is how much of each latency the client itself may have added.
// Every latency counts from the request's planned time, so a late release
// (dispatch delay, the send side) is in it, and so is the time from a token
// reaching the socket to the prober's goroutine stamping it (the read side),
// which the goroutine's scheduling latency plus GC pauses bound.
type ErrorBound struct {
	// P99 is dispatch delay p99 + scheduling latency p99 + GC pause p99 +
	// self-probe read delay p99, Max the same of the maxima: a part without samples (no GC ran) adds
	// nothing. Null where the run's runtime was not sampled.
	P99 *float64 `json:"p99"`
	Max *float64 `json:"max"`
	// DispatchDelay is the send side: release minus planned time, exact.
	DispatchDelay Tail `json:"dispatch_delay"`
	// Runtime is the read side; null where it was not sampled.
	Runtime *RuntimeDelays `json:"runtime"`
	// Limit is the p99 above which the client counts as saturated: a
	// tenth of Objective's threshold, in seconds.
	Limit     float64 `json:"limit"`
	Objective string  `json:"objective"`
}

const (
	// saturationShare: the client is saturated when its own error passes
	// this share of the tightest objective.
	saturationShare = 0.1
	// fallbackObjective stands in for the tightest objective of a burst
	// whose scenarios set none: its tenth is the 5 ms llmprobe used before.
	fallbackObjective = 50 * time.Millisecond
)

// saturationLimit is the bound p99 above which a burst of these scenarios
// measured its client: a tenth of the tightest threshold among them (TTFT,
// TPOT, E2E and stall alike; for TPOT, an average over tokens, this is
// conservative), or of fallbackObjective where none is set. It also says
// which objective that is.
func saturationLimit(scenarios []config.Scenario) (time.Duration, string) {
	var tightest time.Duration
	var name string
	for _, s := range scenarios {
		for _, o := range s.SLO.Objectives() {
			if tightest == 0 || o.Threshold < tightest {
				tightest, name = o.Threshold, fmt.Sprintf("%s %s of scenario %s", o.Name, o.Threshold, s.Name)
			}
		}
	}
	if tightest == 0 {
		tightest, name = fallbackObjective, fmt.Sprintf("no objective is set: %s stands in", fallbackObjective)
	}
	return time.Duration(saturationShare * float64(tightest)), name
}

// newErrorBound sums a run's sides; dispatch is the run's dispatch delay.
func newErrorBound(dispatch Summary, rt *RuntimeDelays, scenarios []config.Scenario) *ErrorBound {
	limit, objective := saturationLimit(scenarios)
	e := &ErrorBound{Runtime: rt, Limit: limit.Seconds(), Objective: objective, DispatchDelay: Tail{Count: uint64(dispatch.Count)}}
	if dispatch.Count > 0 {
		e.DispatchDelay.P99, e.DispatchDelay.Max = figure(dispatch.P99, true), figure(dispatch.Max, true)
	}
	if rt == nil {
		return e
	}
	var p99, maxSum float64
	sampled := false
	for _, t := range []Tail{e.DispatchDelay, rt.SchedLatency, rt.GCPause, rt.ReadDelay} {
		if t.P99 != nil && t.Max != nil {
			p99, maxSum, sampled = p99+*t.P99, maxSum+*t.Max, true
		}
	}
	e.P99, e.Max = figure(p99, sampled), figure(maxSum, sampled)
	return e
}

// Saturated says whether the client's own error passed its limit: the
// bound's p99, or, where the runtime was not sampled, the dispatch delay
// p99 alone (a part of the bound, so past the limit it is saturated too).
func (e *ErrorBound) Saturated() bool {
	if e == nil {
		return false
	}
	v := e.P99
	if v == nil {
		v = e.DispatchDelay.P99
	}
	return v != nil && *v > e.Limit
}

// worseBound is the worse of two steps' bounds, part by part: a sweep's
// verdict rests on every step it ran.
func worseBound(a, b *ErrorBound) *ErrorBound {
	if a == nil || b == nil {
		if a == nil {
			return b
		}
		return a
	}
	w := *a
	w.P99, w.Max = maxFigure(a.P99, b.P99), maxFigure(a.Max, b.Max)
	w.DispatchDelay = worseTail(a.DispatchDelay, b.DispatchDelay)
	if a.Runtime != nil && b.Runtime != nil {
		w.Runtime = &RuntimeDelays{SchedLatency: worseTail(a.Runtime.SchedLatency, b.Runtime.SchedLatency), GCPause: worseTail(a.Runtime.GCPause, b.Runtime.GCPause),
			ReadDelay: worseTail(a.Runtime.ReadDelay, b.Runtime.ReadDelay)}
	} else {
		w.Runtime, w.P99, w.Max = nil, nil, nil // a step without its read side leaves the whole unknown
	}
	return &w
}

func worseTail(a, b Tail) Tail {
	return Tail{Count: a.Count + b.Count, P99: maxFigure(a.P99, b.P99), Max: maxFigure(a.Max, b.Max)}
}

func maxFigure(a, b *float64) *float64 {
	switch {
	case a == nil:
		return b
	case b == nil || *a >= *b:
		return a
	}
	return b
}
