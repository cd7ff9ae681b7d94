package prober

import (
	"fmt"
	"time"
)

// Components of TTFT, the bounded `component` label. Consecutive stretches of
// one request's wait, so a request's parts add up to its TTFT exactly:
//
//	dispatch      t_sched until the prober let the request go (its own lateness)
//	client_queue  a burst's wait for its concurrency cap
//	connect       until the request was written: pool wait, DNS, connect, TLS, write
//	engine_queue  waiting in the engine to be scheduled, as the engine reported it
//	engine_prefill scheduling to the first token, as the engine reported it
//	network       what is left of the server side when the engine reported both:
//	              the network both ways, the HTTP stack, tokenisation
//	server_other  the server side the engine did not split: the whole of it when
//	              it reported nothing, everything but prefill when it reported
//	              only that (llama.cpp, whose slot wait is not reported)
const (
	ComponentDispatch      = "dispatch"
	ComponentClientQueue   = "client_queue"
	ComponentConnect       = "connect"
	ComponentEngineQueue   = "engine_queue"
	ComponentEnginePrefill = "engine_prefill"
	ComponentNetwork       = "network"
	ComponentServerOther   = "server_other"
)

// Components lists every component in the order a request passes them.
var Components = []string{ComponentDispatch, ComponentClientQueue, ComponentConnect, ComponentEngineQueue, ComponentEnginePrefill, ComponentNetwork, ComponentServerOther}

// TTFTPart is one component of a request's TTFT.
type TTFTPart struct {
	Component string
	D         time.Duration
}

// engineTimingsSlack is how far an engine's own figures may exceed the wait
// the client saw (their clocks and millisecond rounding differ) before they
// count as wrong rather than rounded.
const engineTimingsSlack = time.Millisecond

// splitTTFT divides the TTFT of a request that got a first token into its
// components. Every part is the difference of two consecutive instants,
// clamped to stay in order, so the parts add up to TTFT exactly.
func (res *Result) splitTTFT() {
	if !res.FirstTokenSeen() {
		return
	}
	ttft := res.TTFT
	clamp := func(d, lo time.Duration) time.Duration { return min(max(d, lo), ttft) }
	released := clamp(res.DispatchDelay, 0)
	sent := clamp(released+res.QueueWait, released)
	serverFrom := sent
	if res.Timings.Wrote > 0 {
		serverFrom = clamp(res.Timings.Wrote, sent)
	}
	parts := make([]TTFTPart, 0, 6)
	parts = append(parts, TTFTPart{ComponentDispatch, released})
	if res.queued {
		parts = append(parts, TTFTPart{ComponentClientQueue, sent - released})
	}
	server := res.splitServer(ttft-sent, ttft-serverFrom)
	connect := ttft - sent
	for _, p := range server {
		connect -= p.D
	}
	parts = append(parts, TTFTPart{ComponentConnect, connect})
	res.TTFTParts = append(parts, server...)
}

// splitServer divides the server side of TTFT by what the engine reported.
// afterWrite is from the request written to the first token; afterSend is
// that plus connect, the most the server side can be. The parts it returns
// cover afterWrite, or less when the engine's own figures show the write
// callback ran late (a busy client): the engine cannot have queued a
// request before it arrived, so its figures move the boundary back.
func (res *Result) splitServer(afterSend, afterWrite time.Duration) []TTFTPart {
	e := res.Engine
	if e == nil || !e.HasPrefill {
		return []TTFTPart{{ComponentServerOther, afterWrite}}
	}
	queue := time.Duration(0)
	if e.HasQueue {
		queue = e.Queue
	}
	engine := queue + e.Prefill
	if engine > afterSend+engineTimingsSlack {
		res.Note("engine timings not used in the TTFT split: queue %s + prefill %s exceed the %s from sending to the first token", queue, e.Prefill, afterSend)
		return []TTFTPart{{ComponentServerOther, afterWrite}}
	}
	prefill := e.Prefill
	if over := engine - afterSend; over > 0 {
		// Within the slack, millisecond rounding: trim prefill, then queue.
		cut := min(over, prefill)
		prefill -= cut
		queue -= over - cut
		engine = afterSend
	}
	span := max(afterWrite, engine)
	if span > afterWrite {
		res.Note("the request-written stamp came %s after the engine's queue began: connect is capped by the engine's figures", span-afterWrite)
	}
	rest := span - queue - prefill
	if !e.HasQueue {
		return []TTFTPart{{ComponentEnginePrefill, prefill}, {ComponentServerOther, rest}}
	}
	return []TTFTPart{{ComponentEngineQueue, queue}, {ComponentEnginePrefill, prefill}, {ComponentNetwork, rest}}
}

// TTFTPart returns the duration of one component, and whether the request
// had it.
func (res *Result) TTFTPart(component string) (time.Duration, bool) {
	for _, p := range res.TTFTParts {
		if p.Component == component {
			return p.D, true
		}
	}
	return 0, false
}

// TTFTSplitText is the split in one line: "dispatch=0.1ms connect=0.3ms …".
func (res *Result) TTFTSplitText() string {
	var b []byte
	for i, p := range res.TTFTParts {
		if i > 0 {
			b = append(b, ' ')
		}
		b = fmt.Appendf(b, "%s=%s", p.Component, p.D.Round(time.Microsecond))
	}
	if res.Engine != nil {
		b = fmt.Appendf(b, " (engine timings: %s)", res.Engine.Source)
	}
	return string(b)
}
