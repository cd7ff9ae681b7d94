package stats

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
//
// Throttled is how long the CFS quota of llmprobe's cgroup held it off its
// CPUs during the run; null where no cgroup's cpu.stat could be read.
type RuntimeDelays struct {
	SchedLatency Tail        `json:"sched_latency"`
	GCPause      Tail        `json:"gc_pause"`
	ReadDelay    Tail        `json:"read_delay"`
	Throttled    *Throttling `json:"throttled,omitempty"`
}

// Throttling is a run's CPU throttling: the time its process was held off
// its CPUs by its cgroup's quota, and the quota periods in which it was.
type Throttling struct {
	Seconds float64 `json:"seconds"`
	Periods uint64  `json:"periods"`
}

// moreThrottled is the more throttled of two runs, nil where either is
// unknown.
func moreThrottled(a, b *Throttling) *Throttling {
	switch {
	case a == nil || b == nil:
		return nil
	case a.Seconds >= b.Seconds:
		return a
	}
	return b
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

// NewErrorBound sums a run's sides: dispatch is its dispatch delay, rt
// what the runtime and the self-probe saw (nil: not sampled). The client
// is saturated past limit seconds, a share of objective's threshold.
func NewErrorBound(dispatch Tail, rt *RuntimeDelays, limit float64, objective string) *ErrorBound {
	e := &ErrorBound{Runtime: rt, Limit: limit, Objective: objective, DispatchDelay: dispatch}
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
	if sampled {
		e.P99, e.Max = &p99, &maxSum
	}
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

// WorseBound is the worse of two bounds, part by part: a sweep's verdict
// rests on every step it ran.
func WorseBound(a, b *ErrorBound) *ErrorBound {
	if a == nil || b == nil {
		if a == nil {
			return b
		}
		return a
	}
	w := *a
	w.P99, w.Max = maxFigure(a.P99, b.P99), maxFigure(a.Max, b.Max)
	w.DispatchDelay = worseTail(a.DispatchDelay, b.DispatchDelay)
	if w.Runtime = WorseRuntime(a.Runtime, b.Runtime); w.Runtime == nil {
		w.P99, w.Max = nil, nil // a step without its read side leaves the whole unknown
	}
	return &w
}

// WorseRuntime is the worse of two read sides, part by part, nil where
// either is unknown: a sweep's steps, or a split burst's shards, each in
// a process of its own.
func WorseRuntime(a, b *RuntimeDelays) *RuntimeDelays {
	if a == nil || b == nil {
		return nil
	}
	return &RuntimeDelays{SchedLatency: worseTail(a.SchedLatency, b.SchedLatency), GCPause: worseTail(a.GCPause, b.GCPause),
		ReadDelay: worseTail(a.ReadDelay, b.ReadDelay), Throttled: moreThrottled(a.Throttled, b.Throttled)}
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
