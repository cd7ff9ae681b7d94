// Package prober measures one request to an OpenAI-compatible inference
// server by llmprobe's measurement rules. Each API it speaks (chat,
// completions, responses, embeddings, rerank) is one file behind one
// interface, found by the target's `api:`: the body a request sends, how
// its answer is read, streamed or in one body, and which figures apply.
// The client, the transport, the stream reader and the measurement are
// shared; so is what the server says it is.
package prober

import (
	"time"

	"github.com/llmprobe/llmprobe/prober/transport"
	"github.com/llmprobe/llmprobe/quality"
)

// Outcome classifies how a request ended; it is the `outcome` label.
type Outcome string

const (
	OutcomeSuccess         Outcome = "success"
	OutcomeRejected        Outcome = "rejected" // 429 or 503: overload must never look fast
	OutcomeHTTPError       Outcome = "http_error"
	OutcomeTimeout         Outcome = "timeout"
	OutcomeConnectionError Outcome = "connection_error"
	OutcomeStreamError     Outcome = "stream_error" // broken, malformed, no finish, no output, or past max_tokens
	// OutcomeCancelled is a request llmprobe itself stopped (shutdown, a
	// reload that removed it): it says nothing about the target, is not
	// counted in the metrics, and appears in burst reports as what it is.
	OutcomeCancelled Outcome = "cancelled"
)

// Outcomes lists every outcome the target causes, so counters can be
// initialised to zero.
var Outcomes = []Outcome{OutcomeSuccess, OutcomeRejected, OutcomeHTTPError, OutcomeTimeout, OutcomeConnectionError, OutcomeStreamError}

// TokenSource says where the output token count came from.
type TokenSource string

const (
	TokensFromUsage  TokenSource = "usage"  // the server's usage.completion_tokens
	TokensFromChunks TokenSource = "chunks" // fallback: one token per output chunk
	// TokensFromText is the fallback of an unstreamed answer without
	// usage: its texts' length by prompt.EstimateTokens.
	TokensFromText TokenSource = "text"
)

// How a server's usage contradicts what it sent: below what the stream's
// deltas carried (the deltas count instead), or above the max_tokens asked
// for (a max_tokens_exceeded failure).
const (
	TokenMismatchBelowDeltas = "usage_below_deltas"
	TokenMismatchAboveMax    = "usage_above_max_tokens"
)

// TokenMismatches lists them, for label bounds and documentation.
var TokenMismatches = []string{TokenMismatchBelowDeltas, TokenMismatchAboveMax}

// Traffic kinds, the `traffic` label.
const (
	TrafficCanary = "canary"
	TrafficBurst  = "burst"
	// TrafficComparison is an always-on comparison's paired requests.
	TrafficComparison = "comparison"
)

// Check is one objective evaluated for one request.
type Check struct {
	Objective string
	Threshold time.Duration
	Met       bool
	// WithinOwnDelay: missed as measured, met without the prober's own
	// delay (Result.MarkOwnDelayMisses).
	WithinOwnDelay bool
}

// Result is one measured request. Every latency is measured from Sched.
type Result struct {
	Target, Model, Scenario, Traffic string

	// RequestID is the X-Request-Id the request carried, unique per request,
	// so the engine's logs and its truth records can be joined to it.
	RequestID string
	// TraceParent is the W3C traceparent header the request carried; its
	// trace id is RequestID, so engine traces join to the request.
	TraceParent string
	// ResponseModel is the model the answer names ("model" of its first
	// chunks, or of the response object), "" when it names none.
	ResponseModel string
	Sched         time.Time     // when the request was due
	DispatchDelay time.Duration // t_send - t_sched: the prober's own lateness
	// ReadDelay bounds the read side of the prober's own delay in this
	// request's stamps: the largest delay its self-probe, its writes'
	// lateness and GC pauses showed while the request was in flight;
	// ReadDelayFirst and ReadDelayLast the same around its first and last
	// output stamps, which TTFT and e2e are (set at a burst's end; 0 where
	// nothing was sampled, as for canaries).
	ReadDelay, ReadDelayFirst, ReadDelayLast time.Duration
	// Throttled is the CPU throttling of llmprobe's cgroup over the
	// request's flight (its CFS quota stopped the whole process), counted
	// in ReadDelay and ReadDelayLast; ReadDelayFirst counts the part
	// before the first output.
	Throttled time.Duration
	QueueWait time.Duration // burst requests: waiting for the concurrency cap (counted in every latency)

	Outcome    Outcome
	HTTPStatus int
	// Phase, Reason and Error say why a request failed: where (dns,
	// connect, tls, request, headers, stream, or discovery of the model), a
	// bounded code (docs/measurement.md lists them), and in words (the Go
	// error or the server's message). Body is the first bytes of a failed
	// response. Secrets the target echoes are replaced by <secret>.
	Phase, Reason string
	Error         string
	Body          string
	Timings       transport.Timings

	TTFT time.Duration // 0 when no output token arrived
	E2E  time.Duration
	// Unstreamed is an answer asked for in one body (stream: false): E2E
	// is its one latency; TTFT, ITL and TPOT do not apply.
	Unstreamed bool
	TPOT       time.Duration // valid when OutputTokens > 1
	// ITL holds one inter-token latency per output token after the first.
	ITL []time.Duration
	// MaxGap is the longest silence between two output chunks (the stall objective).
	MaxGap time.Duration

	// Reasoning models: TTFTReasoning is the first reasoning_content or
	// reasoning delta, TTFTAnswer the first content, text or tool_calls
	// delta (after reasoning, or without it); 0 when none arrived. Both
	// count from Sched.
	TTFTReasoning, TTFTAnswer time.Duration
	// ReasoningTokens and AnswerTokens split OutputTokens for a request that
	// reasoned (ReasoningTokens > 0); ReasoningSource says where the split
	// came from: the server's usage, or one token per chunk of each kind.
	ReasoningTokens, AnswerTokens int
	ReasoningSource               TokenSource

	OutputTokens int
	TokenSource  TokenSource
	// TokenMismatch is how the server's usage contradicted what it sent
	// (TokenMismatches), "" when it did not.
	TokenMismatch         string
	OutputChunks          int
	PromptTokensRequested int
	PromptTokensReported  int // 0 when the server reported none
	// CachedPromptTokens are the prompt tokens the engine's prefix cache
	// served, when its usage said (CachedReported); a count past the prompt
	// or below 0 is not believed.
	CachedPromptTokens int
	CachedReported     bool
	FinishReason       string
	// Inputs and Dimension are an embeddings answer's vectors and their
	// length; 0 for other APIs.
	Inputs, Dimension int
	// AudioSeconds is the audio a transcription uploaded (0 for other
	// APIs); WordErrors and ReferenceWords its transcript's edit distance
	// from its clip's reference and the reference's words, both 0 without
	// a reference (synthetic audio) or a transcript.
	AudioSeconds               float64
	WordErrors, ReferenceWords int
	// Replica is the replica that answered, as the target's replicas name
	// it: a configured value or "other"; "" without replicas or header.
	Replica string
	// ToolCalls are the answer's function calls, each assembled from its
	// deltas (or read whole from an unstreamed answer); TTFTool is the first
	// tool-call delta, from Sched, 0 when none came.
	ToolCalls []quality.ToolCall
	TTFTool   time.Duration

	// Engine is what the engine reported about the request in its response
	// (vLLM's metrics, llama.cpp's timings); nil when it reported nothing.
	Engine *EngineTimings
	// TTFTParts splits TTFT into its components (breakdown.go), in the order
	// the request passed them; they add up to TTFT. Nil without a first token.
	TTFTParts []TTFTPart

	// Turn is the request's turn in its conversation, from 1; 0 for a
	// request that is no conversation.
	Turn int

	Checks  []Check
	Quality *QualityResult
	Good    bool

	Answer string // the answer's start, for the landing page
	Log    Log    // what happened, line by line, for the landing page

	answerLimit int    // where scrub cuts Answer, once secrets are masked
	ending      string // by the ending rule (ending.go): "" for an answer
	queued      bool   // released by a burst's dispatcher: it waited for the concurrency cap
}

// FirstTokenSeen reports whether an output token arrived.
func (r *Result) FirstTokenSeen() bool { return r.OutputChunks > 0 }

// Reasoned reports whether the request produced reasoning tokens.
func (r *Result) Reasoned() bool { return r.ReasoningTokens > 0 }

// FailureText is the failure in one line, each part once: where, what
// broke in words, and the bounded code: "connect: connection refused
// (127.0.0.1:9) [connection_refused]".
func (r *Result) FailureText() string {
	if r.Outcome == OutcomeSuccess {
		return ""
	}
	return FailureText(r.Phase, r.Reason, r.Error)
}

// FailureText is a failure's phase, reason and error in the one line every
// surface prints.
func FailureText(phase, reason, err string) string {
	return phase + ": " + err + " [" + reason + "]"
}
