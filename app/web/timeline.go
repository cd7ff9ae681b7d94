// One request's events from t_sched on and its token gaps, laid out for the
// request's page, bounded.

package web

import (
	"slices"
	"time"

	"github.com/llmprobe/llmprobe/prober"
)

// Bounds on the token gaps a probe page lists: the first and the last of
// a long answer, and the longest gap wherever it is.
const (
	GapsHead = 20
	GapsTail = 10
)

// Timeline is one request's events from t_sched on, built from what its
// Result holds.
type Timeline struct {
	Events []Event
	Gaps   TokenGaps
}

// Event is one moment of a request. At is from t_sched; Known is false
// where the Result holds only a duration (DNS, connect, TLS), or the
// request never got there.
type Event struct {
	Name  string
	At    time.Duration
	Known bool
	// Took is the time since the previous known event, or the phase's
	// duration where At is unknown.
	Took time.Duration
	Note string
	Bad  bool
}

// TokenGaps is the gap before each output token after the first (ITL),
// bounded: Rows lists some, Elided says how many were left out and how
// long their gaps were.
type TokenGaps struct {
	Count                   int
	Rows                    []GapRow
	Longest                 time.Duration
	Elided                  int
	ElidedMin, ElidedMedian time.Duration
	ElidedMax               time.Duration
}

// GapRow is output token N (1 is the first), its gap and when it came.
type GapRow struct {
	N       int
	Gap, At time.Duration
	Longest bool
	Skipped int // tokens left out before this row
}

// TimelineOf is r's timeline.
func TimelineOf(r *prober.Result) Timeline {
	var t Timeline
	var last time.Duration
	add := func(name string, at time.Duration, note string) {
		t.Events = append(t.Events, Event{Name: name, At: at, Known: true, Took: at - last, Note: note})
		last = at
	}
	phase := func(name string, took time.Duration, note string) {
		t.Events = append(t.Events, Event{Name: name, Took: took, Note: note})
	}
	add("due (t_sched)", 0, "every latency counts from here")
	sent := r.DispatchDelay + r.QueueWait
	if r.QueueWait > 0 {
		add("released by the schedule", r.DispatchDelay, "dispatch delay: the prober's own lateness")
		add("sent", sent, "queue wait: for a slot under the burst's concurrency cap")
	} else {
		add("sent", sent, "dispatch delay: the prober's own lateness")
	}
	switch {
	case r.Timings.ConnReused:
		phase("connection", 0, "reused: no DNS, connect or TLS")
	case r.Timings.OtherDial:
		phase("connection", 0, "new to responses: dialled for an earlier request")
	case r.Timings.DNS > 0 || r.Timings.Connect > 0 || r.Timings.TLS > 0:
		phase("DNS", r.Timings.DNS, "")
		phase("connect", r.Timings.Connect, "")
		if r.Timings.TLS > 0 {
			phase("TLS handshake", r.Timings.TLS, "")
		}
	}
	if r.Timings.TTFB > 0 {
		if r.Timings.FirstByte > 0 && r.Timings.TTFB >= r.Timings.FirstByte {
			add("request written", r.Timings.TTFB-r.Timings.FirstByte, "")
		}
		add("first byte", r.Timings.TTFB, "response headers began")
	}
	if r.FirstTokenSeen() {
		add("first token", r.TTFT, "TTFT")
		t.Gaps = gapsOf(r.TTFT, r.ITL)
	}
	end, note := "end of stream", "E2E"
	if r.Unstreamed {
		end = "answer read" // one body, no stream
	}
	if r.Outcome != prober.OutcomeSuccess {
		end, note = "failed: "+string(r.Outcome), r.FailureText()
	}
	if r.E2E > 0 || r.Outcome != prober.OutcomeSuccess {
		add(end, r.E2E, note)
		t.Events[len(t.Events)-1].Bad = r.Outcome != prober.OutcomeSuccess
	}
	return t
}

// gapsOf lists the first GapsHead and the last GapsTail token gaps, and
// the longest wherever it falls; the rest it sums up.
func gapsOf(ttft time.Duration, itl []time.Duration) TokenGaps {
	g := TokenGaps{Count: len(itl)}
	if len(itl) == 0 {
		return g
	}
	longest := 0
	for i, d := range itl {
		if d > itl[longest] {
			longest = i
		}
	}
	g.Longest = itl[longest]
	show := func(i int) bool { return i < GapsHead || i >= len(itl)-GapsTail || i == longest }
	var elided []time.Duration
	at, skipped := ttft, 0
	for i, d := range itl {
		at += d
		if !show(i) {
			elided = append(elided, d)
			skipped++
			continue
		}
		// Token 1 is the first; itl[i] is the gap before token i+2.
		g.Rows = append(g.Rows, GapRow{N: i + 2, Gap: d, At: at, Longest: i == longest, Skipped: skipped})
		skipped = 0
	}
	if len(elided) > 0 {
		slices.Sort(elided)
		g.Elided = len(elided)
		g.ElidedMin, g.ElidedMedian, g.ElidedMax = elided[0], elided[len(elided)/2], elided[len(elided)-1]
	}
	return g
}
