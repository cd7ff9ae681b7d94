package collector

import (
	"slices"
)

// The per-series families by index: counters, last-request gauges and
// histograms.
const (
	ctrRequests = iota
	ctrGood
	ctrPrompt
	ctrCached
	ctrOutput
	ctrGoodOutput
	ctrSLO
	ctrQuality
	ctrSource
	ctrFailures
	ctrReasoning
	ctrTokenMismatch
	ctrAudio
	ctrWordErrors
	ctrReferenceWords
	ctrReplicaRequests
	numCounters
)

const (
	gaugeLast = iota
	gaugeComponent
	numGauges
)

const (
	histTTFT = iota
	histTTFB
	histITL
	histTPOT
	histE2E
	histDispatch
	histTTFTAnswer
	histTurn
	histTTFTool
	histReplicaTTFT
	numHists
)

// family is one per-series family: its name under the namespace, its help,
// and its labels beside the probe's.
type family struct {
	name, help string
	extra      []string
}

func (f family) labels() []string { return slices.Concat(probeLabels, f.extra) }

var counterFamilies = [numCounters]family{
	ctrRequests:   {"requests_total", "Requests sent, by outcome.", []string{"outcome"}},
	ctrGood:       {"good_requests_total", "Requests that succeeded and met every objective of their scenario.", nil},
	ctrPrompt:     {"prompt_tokens_total", "Prompt tokens of successful requests, as the server reported them (requested count when it reported none).", nil},
	ctrCached:     {"prompt_cached_tokens_total", "Prompt tokens of successful requests that the engine's prefix cache served, as its usage reported them (prompt_tokens_details.cached_tokens: vLLM with --enable-prompt-tokens-details, SGLang with --enable-cache-report, llama.cpp, OpenAI); absent until a request's usage says.", nil},
	ctrOutput:     {"output_tokens_total", "Output tokens of successful requests.", nil},
	ctrGoodOutput: {"good_output_tokens_total", "Output tokens of good requests.", nil},
	ctrSLO:        {"slo_checks_total", "Objective checks per request; a failed request misses every objective.", []string{"objective", "result"}},
	ctrQuality:    {"quality_checks_total", "Answer quality checks of successful requests.", []string{"result"}},
	ctrSource:     {"token_count_source_total", "Successful requests by where their output token count came from: usage (server), chunks (a stream's fallback) or text (an unstreamed answer's fallback, estimated from its text).", []string{"source"}},
	ctrFailures:   {"request_failures_total", "Failed requests by where they failed (phase) and why (reason).", []string{"phase", "reason"}},
	// Only requests that reasoned create it: a model without reasoning adds no series.
	ctrReasoning: {"reasoning_output_tokens_total", "Output tokens of successful requests that reasoned, by kind: reasoning or answer.", []string{"kind"}},
	// Only a server whose usage contradicts its stream creates it.
	// Only transcriptions create them; the word counts only clips with a
	// reference transcript.
	ctrAudio:          {"audio_seconds_total", "Seconds of audio successful transcription requests uploaded: rate(audio_seconds_total) / rate(request_duration_seconds_sum) is RTFx, the audio transcribed per second of a request's e2e.", nil},
	ctrWordErrors:     {"transcript_word_errors_total", "Substitutions, deletions and insertions between successful transcripts and their clips' reference transcripts: over transcript_reference_words_total, the word error rate.", nil},
	ctrReferenceWords: {"transcript_reference_words_total", "Words of the reference transcripts of the clips successful transcription requests uploaded.", nil},
	// Only targets with replicas create it; replica is a configured value
	// or "other".
	ctrReplicaRequests: {"replica_requests_total", "Requests by the replica that answered them, as the target's replicas header named it (a configured value, or other), and by outcome.", []string{"replica", "outcome"}},
	ctrTokenMismatch:   {"token_mismatches_total", "Requests whose usage contradicted what the server sent, by kind: usage_below_deltas (fewer completion tokens than the stream's deltas carried, less the switches between kinds; the deltas were counted instead) or usage_above_max_tokens (more than the max_tokens asked for; the request failed as max_tokens_exceeded).", []string{"kind"}},
}

var gaugeFamilies = [numGauges]family{
	gaugeLast: {"probe_last_timestamp_seconds", "When the last request of this series was due.", nil},
	gaugeComponent: {"probe_ttft_component_seconds", "The TTFT of this series' last successful request that had a split, in consecutive parts that add up to it (component: dispatch, client_queue, connect, engine_queue, engine_prefill, network, server_other; the engine's own timings where it reports them).",
		[]string{"component"}},
}

var histFamilies = [numHists]family{
	histTTFT:     {"time_to_first_token_seconds", "Time from when a request was due to its first output token.", nil},
	histTTFB:     {"time_to_first_byte_seconds", "Time from when a request was due to the first byte of its response.", nil},
	histITL:      {"inter_token_latency_seconds", "Gap between output tokens, split over the tokens of each chunk.", nil},
	histTPOT:     {"time_per_output_token_seconds", "(E2E - TTFT) / (output tokens - 1) per request.", nil},
	histE2E:      {"request_duration_seconds", "Time from when a successful request was due to the end of its stream.", nil},
	histDispatch: {"dispatch_delay_seconds", "How late the prober sent a request after it was due.", nil},
	// Only requests that reasoned create it.
	histTTFTAnswer: {"time_to_first_answer_token_seconds", "Time from when a successful request that reasoned was due to its first answer token (content, text or tool_calls).", nil},
	// Only conversation scenarios create it; turn is bounded by workload.MaxTurns.
	histTurn: {"conversation_ttft_seconds", "TTFT of a conversation's successful requests by turn: from turn 2 at or below turn 1's where the engine's prefix cache serves the history, rising with the history where it does not.", []string{"turn"}},
	// Only requests that called a tool create it.
	// Only targets with replicas create it.
	histReplicaTTFT: {"replica_time_to_first_token_seconds", "TTFT of successful requests by the replica that answered them (a configured value, or other).", []string{"replica"}},
	histTTFTool:     {"time_to_first_tool_call_seconds", "Time from when a successful request was due to its first tool-call delta (a function's name or a piece of its arguments), for requests that called a tool.", nil},
}
