package enginemetrics

import (
	"strings"

	"github.com/llmprobe/llmprobe/config"
)

// Figures, in report order; the bounded values of the metric label.
const (
	MetricTTFT      = "ttft"
	MetricQueue     = "queue"
	MetricPrefill   = "prefill"
	MetricDecode    = "decode"
	MetricInference = "inference"
	MetricE2E       = "e2e"
	MetricTPOT      = "tpot"
	MetricITL       = "itl"
	// MetricPrefillPerToken is llama.cpp's: prompt seconds per prompt token.
	MetricPrefillPerToken = "prefill_per_token"
	// MetricKVTransfer is disaggregated prefill's KV-cache transfer
	// (Window.KVTransfer), apart from Metrics: engines without a KV
	// connector have none.
	MetricKVTransfer = "kv_transfer"
)

// Metrics lists the figures every family is asked for.
var Metrics = []string{MetricTTFT, MetricQueue, MetricPrefill, MetricDecode, MetricInference, MetricE2E, MetricTPOT, MetricITL}

// What a figure's count counts.
const (
	UnitRequests  = "requests"
	UnitTokens    = "tokens"
	UnitIntervals = "intervals"
	UnitTransfers = "transfers"
)

// Gauges, read at each scrape.
const (
	GaugeWaiting = "requests_waiting"
	GaugeRunning = "requests_running"
	GaugeKVCache = "kv_cache_usage"
)

var gaugeNames = []string{GaugeWaiting, GaugeRunning, GaugeKVCache}

// gaugeSeries are the names of every family's gauges, speculative
// decoding's among them: all a sample keeps.
var gaugeSeries = func() map[string]bool {
	out := map[string]bool{}
	for _, f := range families {
		for _, ss := range f.gauges {
			for _, s := range ss {
				out[s.name] = true
			}
		}
	}
	for _, s := range specFamilies {
		for _, n := range []string{s.rate, s.length} {
			if n != "" {
				out[n] = true
			}
		}
	}
	return out
}()

// series selects one histogram, counter or gauge, and optionally one value
// of one label (SGLang's per-stage histogram).
type series struct {
	name         string
	label, value string
	scale        float64 // to seconds, 0 for 1 (SGLang's milliseconds: 0.001)
}

func (s series) String() string {
	if s.label == "" {
		return s.name
	}
	return s.name + `{` + s.label + `="` + s.value + `"}`
}

// ratio is a mean from two counters' deltas, for engines with counters only.
type ratio struct {
	metric   string
	num, den string
	note     string
}

// family is what one engine's page calls each figure. Candidates are tried
// in order (newer name first).
type family struct {
	modelLabel string
	hist       map[string][]series
	absent     map[string]string // why a figure is missing by design
	ratios     []ratio
	gauges     map[string][]series
	maxGauge   map[string]bool // combined by max across series, not sum
	prefixes   []string        // recognise the family from its names
	kvTransfer []series        // disaggregated prefill's KV-transfer histogram
}

// Names checked against each engine's source (the search tool's code corpus):
//   - vLLM: vllm-project/vllm vllm/v1/metrics/loggers.py (PrometheusStatLogger;
//     labels model_name, engine) and docs/design/metrics.md (queue = QUEUED to
//     SCHEDULED, prefill = SCHEDULED to first token, decode = first to last
//     token, TTFT from the frontend's arrival).
//   - SGLang: sgl-project/sglang python/sglang/srt/metrics/collector.py
//     (label model_name; per_stage_req_latency_seconds{stage}, stages from
//     RequestStage in managers/schedule_batch.py: prefill_forward, decode_loop).
//   - TGI: huggingface/text-generation-inference docs/source/reference/metrics.md
//     and router/src/server.rs (unlabelled; no TTFT histogram).
//   - llama.cpp: ggml-org/llama.cpp tools/server, server_task_result_metrics::to_metrics
//     (counters and gauges only), and a real page in testdata/llamacpp.txt.
//   - TensorRT-LLM: NVIDIA/TensorRT-LLM tensorrt_llm/metrics/collector.py
//     (prefix trtllm_, label model_name; served on /prometheus/metrics).
var families = map[string]family{
	config.EngineFamilyVLLM: {
		modelLabel: "model_name",
		hist: map[string][]series{
			MetricTTFT:      {{name: "vllm:time_to_first_token_seconds"}},
			MetricQueue:     {{name: "vllm:request_queue_time_seconds"}},
			MetricPrefill:   {{name: "vllm:request_prefill_time_seconds"}},
			MetricDecode:    {{name: "vllm:request_decode_time_seconds"}},
			MetricInference: {{name: "vllm:request_inference_time_seconds"}},
			MetricE2E:       {{name: "vllm:e2e_request_latency_seconds"}},
			MetricTPOT:      {{name: "vllm:request_time_per_output_token_seconds"}},
			// Before 0.11 the per-token gap was time_per_output_token_seconds.
			MetricITL: {{name: "vllm:inter_token_latency_seconds"}, {name: "vllm:time_per_output_token_seconds"}},
		},
		gauges: map[string][]series{
			GaugeWaiting: {{name: "vllm:num_requests_waiting"}},
			GaugeRunning: {{name: "vllm:num_requests_running"}},
			GaugeKVCache: {{name: "vllm:kv_cache_usage_perc"}, {name: "vllm:gpu_cache_usage_perc"}},
		},
		maxGauge:   map[string]bool{GaugeKVCache: true},
		prefixes:   []string{"vllm:"},
		kvTransfer: []series{{name: "vllm:nixl_xfer_time_seconds"}},
	},
	config.EngineFamilySGLang: {
		modelLabel: "model_name",
		hist: map[string][]series{
			MetricTTFT:    {{name: "sglang:time_to_first_token_seconds"}},
			MetricQueue:   {{name: "sglang:queue_time_seconds"}},
			MetricPrefill: {{name: "sglang:per_stage_req_latency_seconds", label: "stage", value: "prefill_forward"}},
			MetricDecode:  {{name: "sglang:per_stage_req_latency_seconds", label: "stage", value: "decode_loop"}},
			MetricE2E:     {{name: "sglang:e2e_request_latency_seconds"}},
			MetricITL:     {{name: "sglang:inter_token_latency_seconds"}, {name: "sglang:time_per_output_token_seconds"}},
		},
		absent: map[string]string{
			MetricInference: "SGLang exports no prefill+decode histogram",
			MetricTPOT:      "SGLang exports no per-request time per output token (see itl)",
		},
		gauges: map[string][]series{
			GaugeWaiting: {{name: "sglang:num_queue_reqs"}},
			GaugeRunning: {{name: "sglang:num_running_reqs"}},
			GaugeKVCache: {{name: "sglang:token_usage"}},
		},
		maxGauge:   map[string]bool{GaugeKVCache: true},
		prefixes:   []string{"sglang:"},
		kvTransfer: []series{{name: "sglang:kv_transfer_latency_ms", scale: 0.001}},
	},
	config.EngineFamilyTGI: {
		hist: map[string][]series{
			MetricQueue:     {{name: "tgi_request_queue_duration"}},
			MetricInference: {{name: "tgi_request_inference_duration"}},
			MetricE2E:       {{name: "tgi_request_duration"}},
			MetricTPOT:      {{name: "tgi_request_mean_time_per_token_duration"}},
		},
		absent: map[string]string{
			MetricTTFT:    "TGI exports no TTFT histogram",
			MetricPrefill: `TGI times prefill per batch (tgi_batch_forward_duration{method="prefill"}), not per request`,
			MetricDecode:  "TGI times decode per batch, not per request (see inference)",
			MetricITL:     "TGI exports no per-token gap histogram (see tpot)",
		},
		gauges: map[string][]series{
			GaugeWaiting: {{name: "tgi_queue_size"}},
			GaugeRunning: {{name: "tgi_batch_current_size"}},
		},
		prefixes: []string{"tgi_"},
	},
	config.EngineFamilyLlamaCPP: {
		absent: map[string]string{
			MetricTTFT:      llamaCounters,
			MetricQueue:     llamaCounters + "; it has no queue figure at all",
			MetricPrefill:   llamaCounters + " (see prefill_per_token)",
			MetricDecode:    llamaCounters + " (see tpot)",
			MetricInference: llamaCounters,
			MetricE2E:       llamaCounters,
			MetricITL:       llamaCounters + " (see tpot)",
		},
		ratios: []ratio{
			{MetricTPOT, "llamacpp:tokens_predicted_seconds_total", "llamacpp:tokens_predicted_total",
				"a mean, no percentiles: Δllamacpp:tokens_predicted_seconds_total / Δllamacpp:tokens_predicted_total (generation time per generated token)"},
			{MetricPrefillPerToken, "llamacpp:prompt_seconds_total", "llamacpp:prompt_tokens_total",
				"a mean, no percentiles: Δllamacpp:prompt_seconds_total / Δllamacpp:prompt_tokens_total (prompt time per prompt token, cached tokens excluded)"},
		},
		gauges: map[string][]series{
			GaugeWaiting: {{name: "llamacpp:requests_deferred"}},
			GaugeRunning: {{name: "llamacpp:requests_processing"}},
		},
		prefixes: []string{"llamacpp:"},
	},
	config.EngineFamilyTRTLLM: {
		modelLabel: "model_name",
		hist: map[string][]series{
			MetricTTFT:      {{name: "trtllm_time_to_first_token_seconds"}},
			MetricQueue:     {{name: "trtllm_request_queue_time_seconds"}},
			MetricPrefill:   {{name: "trtllm_request_prefill_time_seconds"}},
			MetricDecode:    {{name: "trtllm_request_decode_time_seconds"}},
			MetricInference: {{name: "trtllm_request_inference_time_seconds"}},
			MetricE2E:       {{name: "trtllm_e2e_request_latency_seconds"}},
			MetricTPOT:      {{name: "trtllm_time_per_output_token_seconds"}},
		},
		absent: map[string]string{MetricITL: "TensorRT-LLM exports no per-token gap histogram (see tpot)"},
		gauges: map[string][]series{
			GaugeWaiting: {{name: "trtllm_num_requests_waiting"}},
			GaugeRunning: {{name: "trtllm_num_requests_running"}},
			GaugeKVCache: {{name: "trtllm_kv_cache_utilization"}},
		},
		maxGauge: map[string]bool{GaugeKVCache: true},
		prefixes: []string{"trtllm_"},
	},
}

const llamaCounters = "llama.cpp's /metrics has counters only, no per-request histogram"

// processStart changes when the engine restarts (Python engines export it).
const processStart = "process_start_time_seconds"

// knownNames are the only families a page keeps.
var knownNames = func() map[string]bool {
	out := map[string]bool{processStart: true, loraInfo: true}
	for _, f := range families {
		for _, ss := range f.hist {
			for _, s := range ss {
				out[s.name] = true
			}
		}
		for _, ss := range f.gauges {
			for _, s := range ss {
				out[s.name] = true
			}
		}
		for _, r := range f.ratios {
			out[r.num], out[r.den] = true, true
		}
		for _, s := range f.kvTransfer {
			out[s.name] = true
		}
	}
	for _, s := range specFamilies {
		for _, n := range s.names() {
			out[n] = true
		}
	}
	return out
}()

// detected maps target_info's engine names to families; the sim serves
// vLLM's names.
var detected = map[string]string{
	"vllm": config.EngineFamilyVLLM, "llmprobe-sim": config.EngineFamilyVLLM,
	"sglang": config.EngineFamilySGLang, "tgi": config.EngineFamilyTGI,
	"llamacpp": config.EngineFamilyLlamaCPP, "trtllm": config.EngineFamilyTRTLLM,
}

// resolve picks the family: the configured one, else the engine target_info
// detected, else the one whose names the page carries.
func resolve(configured, engine string, p *Page) (name, source string) {
	if configured != "" && configured != config.EngineFamilyAuto {
		return configured, "configured"
	}
	if f, ok := detected[engine]; ok {
		return f, "auto: target_info detected engine " + engine
	}
	if p.OK() {
		for _, fname := range []string{config.EngineFamilyVLLM, config.EngineFamilySGLang, config.EngineFamilyTGI, config.EngineFamilyLlamaCPP, config.EngineFamilyTRTLLM} {
			for name := range p.families {
				for _, prefix := range families[fname].prefixes {
					if strings.HasPrefix(name, prefix) {
						return fname, "auto: from the page's metric names (target_info engine " + quoteOr(engine) + ")"
					}
				}
			}
		}
	}
	return "", ""
}

func quoteOr(s string) string {
	if s == "" {
		return "unknown"
	}
	return `"` + s + `"`
}
