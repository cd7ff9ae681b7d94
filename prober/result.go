// Package prober measures one streaming request to an OpenAI-compatible
// inference server by llmprobe's measurement rules.
package prober

import (
	"fmt"
	"time"
)

// Outcome classifies how a request ended; it is the `outcome` label.
type Outcome string

const (
	OutcomeSuccess         Outcome = "success"
	OutcomeRejected        Outcome = "rejected" // 429 or 503: overload must never look fast
	OutcomeHTTPError       Outcome = "http_error"
	OutcomeTimeout         Outcome = "timeout"
	OutcomeConnectionError Outcome = "connection_error"
	OutcomeStreamError     Outcome = "stream_error" // broken, malformed, or no finish
)

// Outcomes lists every outcome, so counters can be initialised to zero.
var Outcomes = []Outcome{OutcomeSuccess, OutcomeRejected, OutcomeHTTPError, OutcomeTimeout, OutcomeConnectionError, OutcomeStreamError}

// TokenSource says where the output token count came from.
type TokenSource string

const (
	TokensFromUsage  TokenSource = "usage"  // the server's usage.completion_tokens
	TokensFromChunks TokenSource = "chunks" // fallback: one token per output chunk
)

// Traffic kinds, the `traffic` label.
const (
	TrafficCanary = "canary"
	TrafficBurst  = "burst"
)

// Check is one objective evaluated for one request.
type Check struct {
	Objective string
	Threshold time.Duration
	Met       bool
}

// Result is one measured request. Every latency is measured from Sched.
type Result struct {
	Target, Model, Scenario, Traffic string

	Sched         time.Time     // when the request was due
	DispatchDelay time.Duration // t_send - t_sched: the prober's own lateness
	QueueWait     time.Duration // burst requests: waiting for the concurrency cap (counted in every latency)

	Outcome    Outcome
	HTTPStatus int
	Error      string // short reason when Outcome is not success

	TTFT time.Duration // 0 when no output token arrived
	E2E  time.Duration
	TPOT time.Duration // valid when OutputTokens > 1
	// ITL holds one inter-token latency per output token after the first.
	ITL []time.Duration
	// MaxGap is the longest silence between two output chunks (the stall objective).
	MaxGap time.Duration

	OutputTokens          int
	TokenSource           TokenSource
	OutputChunks          int
	PromptTokensRequested int
	PromptTokensReported  int // 0 when the server reported none
	FinishReason          string

	Checks  []Check
	Quality *QualityResult
	Good    bool

	Answer string   // the answer's start, for the landing page
	Log    []string // what happened, line by line, for the landing page
}

// FirstTokenSeen reports whether an output token arrived.
func (r *Result) FirstTokenSeen() bool { return r.OutputChunks > 0 }

func (r *Result) logf(format string, args ...any) {
	r.Log = append(r.Log, fmt.Sprintf("%7.1fms ", float64(time.Since(r.Sched).Microseconds())/1000)+fmt.Sprintf(format, args...))
}
