// Package persona is how the simulated engine poses as each engine family:
// the metrics on its /metrics page, how it says what it is, and the
// per-request timings object it answers with.
package persona

import "time"

// Families the sim can pose as.
const (
	VLLM     = "vllm"
	SGLang   = "sglang"
	TGI      = "tgi"
	LlamaCPP = "llamacpp"
	// TEI is text-embeddings-inference: it serves embeddings and its own
	// /rerank, no generation and no /v1/models.
	TEI = "tei"
)

// Families lists the generating families; any other name is the sim
// itself, with vLLM's metric names.
var Families = []string{VLLM, SGLang, TGI, LlamaCPP}

// PoolingFamilies lists the families that only embed and rank.
var PoolingFamilies = []string{TEI}

// Request is one request's course through the engine: its tokens and when
// it arrived, was admitted to the batch, and got its first and last token.
type Request struct {
	PromptTokens, Generated        int
	Arrived, Admitted, First, Last time.Time
}

// Identity is how a family says what it is: /v1/models' owned_by, the
// Server header and its version endpoint, as the real engines answer.
type Identity struct {
	OwnedBy     string
	VersionPath string
	// PoolingOnly: no generation endpoints and no /v1/models, as TEI.
	PoolingOnly bool
	server      func(version string) string
	version     func(version string) any
}

// Server is the Server header at version; empty sends none.
func (id Identity) Server(version string) string { return id.server(version) }

// Version is the version endpoint's answer at version.
func (id Identity) Version(version string) any { return id.version(version) }

// IdentityOf is the family's identity for a server of model; any other
// family is the sim itself.
func IdentityOf(family, model string) Identity {
	uvicorn := func(string) string { return "uvicorn" }
	versionOnly := func(v string) any { return map[string]string{"version": v} }
	switch family {
	case VLLM:
		return Identity{OwnedBy: "vllm", server: uvicorn, VersionPath: "/version", version: versionOnly}
	case SGLang:
		return Identity{OwnedBy: "sglang", server: uvicorn, VersionPath: "/get_server_info", version: func(v string) any {
			return map[string]any{"model_path": model, "version": v}
		}}
	case TGI:
		// TGI's router names the model as its owner and sends no Server header.
		return Identity{OwnedBy: model, server: func(string) string { return "" }, VersionPath: "/info", version: func(v string) any {
			return map[string]any{"model_id": model, "router": "text-generation-router", "version": v}
		}}
	case TEI:
		return Identity{PoolingOnly: true, server: func(string) string { return "" }, VersionPath: "/info", version: func(v string) any {
			return map[string]any{"model_id": model, "model_sha": nil, "model_dtype": "float16",
				"model_type":              map[string]any{"reranker": map[string]any{"id2label": map[string]string{"0": "LABEL_0"}, "label2id": map[string]int{"LABEL_0": 0}}},
				"max_concurrent_requests": 512, "max_input_length": 8192, "max_batch_tokens": 16384, "max_client_batch_size": 512,
				"auto_truncate": false, "tokenization_workers": 2, "version": v, "sha": nil, "docker_label": nil}
		}}
	case LlamaCPP:
		return Identity{OwnedBy: "llamacpp", server: func(string) string { return "llama.cpp" }, VersionPath: "/props", version: func(v string) any {
			return map[string]any{"build_info": v, "model_path": model}
		}}
	}
	return Identity{OwnedBy: "llmprobe-sim", server: func(v string) string { return "llmprobe-sim/" + v }, VersionPath: "/version", version: versionOnly}
}

// TimingsKind is which per-request timings object a response carries.
type TimingsKind int

const (
	TimingsNone TimingsKind = iota
	TimingsVLLM
	TimingsLlamaCPP
)

// TimingsFor says which timings a response carries: llama.cpp always sends
// its own; vLLM only when started with per-request metrics and asked with
// include_metrics.
func TimingsFor(family string, perRequestMetrics, includeMetrics bool) TimingsKind {
	switch {
	case family == LlamaCPP:
		return TimingsLlamaCPP
	case perRequestMetrics && includeMetrics:
		return TimingsVLLM
	}
	return TimingsNone
}

// RequestMetrics is vLLM's per-request metrics object: the wait to be
// scheduled, scheduling to the first token, first to last token.
type RequestMetrics struct {
	QueueTimeMs        float64 `json:"queue_time_ms"`
	TimeToFirstTokenMs float64 `json:"time_to_first_token_ms"`
	GenerationTimeMs   float64 `json:"generation_time_ms"`
}

// LlamaTimings is the part of llama.cpp's timings object the sim fills.
type LlamaTimings struct {
	CacheN      int     `json:"cache_n"`
	PromptN     int     `json:"prompt_n"`
	PromptMs    float64 `json:"prompt_ms"`
	PredictedN  int     `json:"predicted_n"`
	PredictedMs float64 `json:"predicted_ms"`
}

// RequestMetricsOf is vLLM's object for a finished request.
func RequestMetricsOf(r Request) *RequestMetrics {
	return &RequestMetrics{QueueTimeMs: millis(r.Admitted.Sub(r.Arrived)), TimeToFirstTokenMs: millis(r.First.Sub(r.Admitted)), GenerationTimeMs: millis(r.Last.Sub(r.First))}
}

// LlamaTimingsOf is llama.cpp's object for a finished request.
func LlamaTimingsOf(r Request) *LlamaTimings {
	return &LlamaTimings{PromptN: r.PromptTokens, PromptMs: millis(r.First.Sub(r.Admitted)), PredictedN: r.Generated, PredictedMs: millis(r.Last.Sub(r.First))}
}

// millis is d in milliseconds with nanosecond resolution, as engines write it.
func millis(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
