package prober

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/llmprobe/llmprobe/prober/openai"
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

// Sources of engine timings.
const (
	EngineTimingsVLLM     = "vllm_metrics"     // vLLM --enable-per-request-metrics, the response's `metrics`
	EngineTimingsLlamaCPP = "llamacpp_timings" // llama.cpp server, the response's `timings`
)

// EngineTimings is what the engine reported about one request in its
// response. A phase it did not report has its Has flag false.
type EngineTimings struct {
	Source string
	// Queue is the wait to be scheduled; Prefill is from scheduling to the
	// first token; Decode from the first token to the last.
	Queue, Prefill, Decode          time.Duration
	HasQueue, HasPrefill, HasDecode bool
	// CachedPromptTokens is the prompt tokens served from the prefix cache
	// (llama.cpp's cache_n); -1 when not reported.
	CachedPromptTokens int
}

// engineTimingsSlack is how far an engine's own figures may exceed the wait
// the client saw (their clocks and millisecond rounding differ) before they
// count as wrong rather than rounded.
const engineTimingsSlack = time.Millisecond

// maxEngineMillis bounds a plausible engine figure (a day): beyond it, or
// negative, or not a number, the figure is garbage and ignored.
const maxEngineMillis = 24 * 3600 * 1000

// parseEngineMillis reads one millisecond figure of an engine's object:
// absent or null is not reported; anything but a plausible number is an
// error, so a garbage field is ignored with its reason, never fatal.
func parseEngineMillis(obj map[string]json.RawMessage, key string) (time.Duration, bool, error) {
	raw, ok := obj[key]
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return 0, false, nil
	}
	var ms float64
	if err := json.Unmarshal(raw, &ms); err != nil {
		return 0, false, fmt.Errorf("%s is not a number: %s", key, openai.Truncate(string(raw), 32))
	}
	if math.IsNaN(ms) || ms < 0 || ms > maxEngineMillis {
		return 0, false, fmt.Errorf("%s %v ms is out of range [0, %d]", key, ms, maxEngineMillis)
	}
	return time.Duration(ms * float64(time.Millisecond)), true, nil
}

// parseVLLMMetrics reads vLLM's per-request `metrics` object.
func parseVLLMMetrics(raw json.RawMessage) (*EngineTimings, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("metrics is not an object: %s", openai.Truncate(string(raw), 64))
	}
	t := &EngineTimings{Source: EngineTimingsVLLM, CachedPromptTokens: -1}
	var err error
	var errs []error
	if t.Queue, t.HasQueue, err = parseEngineMillis(obj, "queue_time_ms"); err != nil {
		errs = append(errs, err)
	}
	// vLLM counts its time_to_first_token_ms from scheduling: the prefill.
	if t.Prefill, t.HasPrefill, err = parseEngineMillis(obj, "time_to_first_token_ms"); err != nil {
		errs = append(errs, err)
	}
	if t.Decode, t.HasDecode, err = parseEngineMillis(obj, "generation_time_ms"); err != nil {
		errs = append(errs, err)
	}
	return t, joinErrs(errs)
}

// parseLlamaTimings reads llama.cpp server's `timings` object.
func parseLlamaTimings(raw json.RawMessage) (*EngineTimings, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("timings is not an object: %s", openai.Truncate(string(raw), 64))
	}
	t := &EngineTimings{Source: EngineTimingsLlamaCPP, CachedPromptTokens: -1}
	var err error
	var errs []error
	if t.Prefill, t.HasPrefill, err = parseEngineMillis(obj, "prompt_ms"); err != nil {
		errs = append(errs, err)
	}
	if t.Decode, t.HasDecode, err = parseEngineMillis(obj, "predicted_ms"); err != nil {
		errs = append(errs, err)
	}
	var cached int
	if raw, ok := obj["cache_n"]; ok && json.Unmarshal(raw, &cached) == nil && cached >= 0 {
		t.CachedPromptTokens = cached
	}
	return t, joinErrs(errs)
}

func joinErrs(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return fmt.Errorf("%v; %v", errs[0], joinErrs(errs[1:]))
}

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
		res.logf("engine timings not used in the TTFT split: queue %s + prefill %s exceed the %s from sending to the first token", queue, e.Prefill, afterSend)
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
		res.logf("the request-written stamp came %s after the engine's queue began: connect is capped by the engine's figures", span-afterWrite)
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
