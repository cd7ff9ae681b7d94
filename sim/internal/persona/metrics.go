package persona

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// observer is a prometheus.Observer, or nothing where the family has no such metric.
type observer func(float64)

func (o observer) observe(v float64) {
	if o != nil {
		o(v)
	}
}

// Metrics are the server-side metrics, named as the family names them, so
// dashboards can put the engine's view next to llmprobe's.
type Metrics struct {
	ttft, itl, e2e, queueTime observer
	prefill                   func(promptTokens int, seconds float64) // admission to first token
	tpot                      observer                                // per request: mean time per output token after the first
	promptTokens, outputs     observer                                // per finished request
	success                   func()
	// Per finished request, as vLLM's: scheduled to first token, first to
	// last token, scheduled to last token.
	prefillTime, decodeTime, inferenceTime observer
	// draft counts a decode step's share of a speculative step, per output
	// token after the first; nil without a draft model.
	draft func()
	// kvTransfer observes a request's KV-cache transfer, in seconds, where
	// prefill is disaggregated.
	kvTransfer observer
}

// Features are what an engine runs beyond plain serving: a draft model,
// and prefill disaggregated from decode (its KV cache transferred).
type Features struct {
	SpecDecode SpecDecode
	KVTransfer bool
	// MaxLoRA, when above 0, serves LoRA adapters, this many at once: vLLM
	// then exports vllm:lora_requests_info.
	MaxLoRA int
}

// loraInfo is vLLM's vllm:lora_requests_info: one series whose labels are
// the adapters running and waiting now and the most at once, its value
// when it was set (vLLM keeps the older label sets, older in value).
type loraInfo struct {
	desc *prometheus.Desc
	max  string
	load func() Load
}

func (l loraInfo) Describe(ch chan<- *prometheus.Desc) { ch <- l.desc }

func (l loraInfo) Collect(ch chan<- prometheus.Metric) {
	now := l.load()
	ch <- prometheus.MustNewConstMetric(l.desc, prometheus.GaugeValue, float64(time.Now().UnixNano())/1e9,
		l.max, strings.Join(now.RunningAdapters, ","), strings.Join(now.WaitingAdapters, ","))
}

// SpecDecode is a draft model: each decode step drafts DraftTokens, the
// share Acceptance of them accepted; DraftTokens 0 is none.
type SpecDecode struct {
	DraftTokens int
	Acceptance  float64
}

// stepTokens is what one speculative step yields: the accepted drafts
// and the target model's own token.
func (s SpecDecode) stepTokens() float64 { return 1 + float64(s.DraftTokens)*s.Acceptance }

// specCounters registers a family's speculative-decoding counters (vLLM's
// and llama.cpp's names differ by prefix) and counts each output token as
// 1/stepTokens of a step, so the counters' ratios are exactly the
// acceptance asked for: accepted / draft tokens = Acceptance, 1 + accepted
// / drafts = stepTokens. Without a draft model they stay at 0 (llama.cpp
// exports them so) or are not registered (vLLM: register false).
func (r registrar) specCounters(prefix string, s SpecDecode, register bool) func() {
	if !register && s.DraftTokens == 0 {
		return nil
	}
	drafts := r.counter(prefix+"spec_decode_num_drafts_total", "Number of spec decoding drafts.")
	tokens := r.counter(prefix+"spec_decode_num_draft_tokens_total", "Number of draft tokens.")
	accepted := r.counter(prefix+"spec_decode_num_accepted_tokens_total", "Number of accepted tokens.")
	if s.DraftTokens == 0 {
		return nil
	}
	per := 1 / s.stepTokens()
	return func() {
		drafts.Add(per)
		tokens.Add(float64(s.DraftTokens) * per)
		accepted.Add(float64(s.DraftTokens) * s.Acceptance * per)
	}
}

// throughput keeps token and time sums for the families that export an
// average rate as a gauge.
type throughput struct {
	mu             sync.Mutex
	tokens, second float64
}

func (t *throughput) add(tokens, seconds float64) {
	t.mu.Lock()
	t.tokens += tokens
	t.second += seconds
	t.mu.Unlock()
}

func (t *throughput) rate() float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.second == 0 {
		return 0
	}
	return t.tokens / t.second
}

// registrar registers one family's metrics with fixed labels; its gauges
// read the engine's load.
type registrar struct {
	reg      prometheus.Registerer
	labels   prometheus.Labels
	load     func() Load
	maxBatch int
}

func (r registrar) hist(name, help string, buckets []float64) observer {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets, ConstLabels: r.labels})
	r.reg.MustRegister(h)
	return h.Observe
}

func (r registrar) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: r.labels})
	r.reg.MustRegister(c)
	return c
}

func (r registrar) gauge(name, help string, f func(Load) float64) {
	r.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: r.labels}, func() float64 { return f(r.load()) }))
}

// usage is the share of the batch that runs, the families' cache usage.
func (r registrar) usage(l Load) float64 { return float64(l.Running) / float64(r.maxBatch) }

var (
	tokenBuckets      = []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000}
	ttftBuckets       = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560}
	tokenGapBucket    = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80}
	kvTransferSeconds = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 5}
	kvTransferMs      = []float64{1, 5, 10, 25, 50, 75, 100, 200, 500, 1000, 5000}
	requestBuckets    = []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680}
)

// Load is what the engine runs and queues now, for the families' gauges,
// and the LoRA adapters of those requests.
type Load struct {
	Running, Waiting                 int
	RunningAdapters, WaitingAdapters []string
}

// NewMetrics registers the family's metrics (vLLM's for any other family)
// with reg; their gauges read load, a batch of at most maxBatch.
func NewMetrics(reg prometheus.Registerer, family, model string, maxBatch int, load func() Load, f Features) *Metrics {
	r := registrar{reg: reg, load: load, maxBatch: maxBatch}
	spec := f.SpecDecode
	switch family {
	case SGLang:
		r.labels = prometheus.Labels{"model_name": model}
		m := sglangMetrics(r)
		if spec.DraftTokens > 0 {
			r.gauge("sglang:spec_accept_rate", "The average acceptance rate of speculative decoding.", func(Load) float64 { return spec.Acceptance })
			r.gauge("sglang:spec_accept_length", "The average acceptance length of speculative decoding.", func(Load) float64 { return spec.stepTokens() })
		}
		if f.KVTransfer { // in milliseconds, as SGLang's
			ms := r.hist("sglang:kv_transfer_latency_ms", "The transfer latency of the KV cache in ms.", kvTransferMs)
			m.kvTransfer = func(seconds float64) { ms(1000 * seconds) }
		}
		return m
	case TGI:
		return tgiMetrics(r)
	case LlamaCPP:
		m := llamacppMetrics(r)
		m.draft = r.specCounters("llamacpp:", spec, true)
		return m
	}
	r.labels = prometheus.Labels{"model_name": model, "engine": "0"}
	m := vllmMetrics(r)
	m.draft = r.specCounters("vllm:", spec, false)
	if f.MaxLoRA > 0 {
		r.reg.MustRegister(loraInfo{desc: prometheus.NewDesc("vllm:lora_requests_info", "Running stats on lora requests.", []string{"max_lora", "running_lora_adapters", "waiting_lora_adapters"}, nil),
			max: strconv.Itoa(f.MaxLoRA), load: r.load})
	}
	if f.KVTransfer { // the NIXL connector's, its buckets
		m.kvTransfer = r.hist("vllm:nixl_xfer_time_seconds", "Histogram of transfer duration for NIXL KV Cache transfers.", kvTransferSeconds)
	}
	return m
}

func vllmMetrics(r registrar) *Metrics {
	promptTotal := r.counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.")
	generationTotal := r.counter("vllm:generation_tokens_total", "Number of generation tokens processed.")
	promptHist := r.hist("vllm:request_prompt_tokens", "Number of prefill tokens processed.", tokenBuckets)
	generationHist := r.hist("vllm:request_generation_tokens", "Number of generation tokens processed.", tokenBuckets)
	success := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vllm:request_success_total", Help: "Count of successfully processed requests.", ConstLabels: r.labels,
	}, []string{"finished_reason"})
	r.reg.MustRegister(success)
	r.gauge("vllm:num_requests_running", "Number of requests in model execution batches.", func(l Load) float64 { return float64(l.Running) })
	r.gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", func(l Load) float64 { return float64(l.Waiting) })
	r.gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", r.usage)
	return &Metrics{
		ttft:          r.hist("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", ttftBuckets),
		itl:           r.hist("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", tokenGapBucket),
		e2e:           r.hist("vllm:e2e_request_latency_seconds", "Histogram of end to end request latency in seconds.", requestBuckets),
		queueTime:     r.hist("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", requestBuckets),
		prefillTime:   r.hist("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", requestBuckets),
		decodeTime:    r.hist("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", requestBuckets),
		inferenceTime: r.hist("vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.", requestBuckets),
		tpot:          r.hist("vllm:request_time_per_output_token_seconds", "Histogram of time_per_output_token_seconds per request.", tokenGapBucket),
		promptTokens:  func(v float64) { promptHist(v); promptTotal.Add(v) },
		outputs:       func(v float64) { generationHist(v); generationTotal.Add(v) },
		success:       func() { success.WithLabelValues("length").Inc() },
	}
}

// sglangMetrics are SGLang's names (docs/references/production_metrics.md).
func sglangMetrics(r registrar) *Metrics {
	promptTotal := r.counter("sglang:prompt_tokens_total", "Number of prefill tokens processed.")
	generationTotal := r.counter("sglang:generation_tokens_total", "Number of generation tokens processed.")
	requests := r.counter("sglang:num_requests_total", "Number of requests processed.")
	gen := &throughput{}
	r.gauge("sglang:num_running_reqs", "The number of running requests.", func(l Load) float64 { return float64(l.Running) })
	r.gauge("sglang:num_queue_reqs", "The number of requests in the waiting queue.", func(l Load) float64 { return float64(l.Waiting) })
	r.gauge("sglang:token_usage", "The token usage.", r.usage)
	r.gauge("sglang:gen_throughput", "The generate throughput (token/s).", func(Load) float64 { return gen.rate() })
	itl := r.hist("sglang:time_per_output_token_seconds", "Histogram of time per output token in seconds.", tokenGapBucket)
	return &Metrics{
		ttft:         r.hist("sglang:time_to_first_token_seconds", "Histogram of time to first token in seconds.", ttftBuckets),
		itl:          func(v float64) { itl(v); gen.add(1, v) },
		e2e:          r.hist("sglang:e2e_request_latency_seconds", "Histogram of End-to-end request latency in seconds", requestBuckets),
		queueTime:    r.hist("sglang:queue_time_seconds", "Histogram of queueing time in seconds.", requestBuckets),
		promptTokens: promptTotal.Add,
		outputs:      generationTotal.Add,
		success:      requests.Inc,
	}
}

// tgiMetrics are Text Generation Inference's names (docs/source/reference/metrics.md):
// unlabelled, durations in seconds without a unit suffix, and no TTFT histogram.
func tgiMetrics(r registrar) *Metrics {
	count := r.counter("tgi_request_count", "Total number of requests.")
	success := r.counter("tgi_request_success", "Number of successful requests.")
	r.gauge("tgi_queue_size", "Current queue size.", func(l Load) float64 { return float64(l.Waiting) })
	r.gauge("tgi_batch_current_size", "Current batch size.", func(l Load) float64 { return float64(l.Running) })
	return &Metrics{
		e2e:          r.hist("tgi_request_duration", "Total time spent processing the request (e2e latency).", requestBuckets),
		queueTime:    r.hist("tgi_request_queue_duration", "Time spent in the queue per request.", requestBuckets),
		tpot:         r.hist("tgi_request_mean_time_per_token_duration", "Mean time per token per request (inter-token latency).", tokenGapBucket),
		promptTokens: r.hist("tgi_request_input_length", "Input token length per request.", tokenBuckets),
		outputs:      r.hist("tgi_request_generated_tokens", "Generated tokens per request.", tokenBuckets),
		success:      func() { count.Inc(); success.Inc() },
	}
}

// llamacppMetrics are llama.cpp server's names (its /metrics with --metrics):
// counters and averages, no histograms.
func llamacppMetrics(r registrar) *Metrics {
	prompt, gen := &throughput{}, &throughput{}
	promptTokens := r.counter("llamacpp:prompt_tokens_total", "Number of prompt tokens processed, excluding cached tokens")
	promptSeconds := r.counter("llamacpp:prompt_seconds_total", "Total time spent processing prompts")
	predicted := r.counter("llamacpp:tokens_predicted_total", "Number of generation tokens processed")
	predictedSeconds := r.counter("llamacpp:tokens_predicted_seconds_total", "Total time spent generating tokens")
	r.gauge("llamacpp:prompt_tokens_seconds", "Average prompt throughput in tokens/s", func(Load) float64 { return prompt.rate() })
	r.gauge("llamacpp:predicted_tokens_seconds", "Average generation throughput in tokens/s", func(Load) float64 { return gen.rate() })
	r.gauge("llamacpp:requests_processing", "Number of requests processing", func(l Load) float64 { return float64(l.Running) })
	r.gauge("llamacpp:requests_deferred", "Number of requests deferred", func(l Load) float64 { return float64(l.Waiting) })
	return &Metrics{
		prefill: func(tokens int, seconds float64) {
			promptTokens.Add(float64(tokens))
			promptSeconds.Add(seconds)
			prompt.add(float64(tokens), seconds)
		},
		itl:     func(v float64) { predictedSeconds.Add(v); gen.add(1, v) },
		outputs: predicted.Add,
	}
}

// Admitted records a request entering the batch, and its KV cache's
// transfer of transfer where prefill is disaggregated.
func (m *Metrics) Admitted(r Request, transfer time.Duration) {
	m.queueTime.observe(r.Admitted.Sub(r.Arrived).Seconds())
	if transfer > 0 {
		m.kvTransfer.observe(transfer.Seconds())
	}
}

// Token records a request's next token at now, before it is counted.
func (m *Metrics) Token(r Request, now time.Time) {
	if r.Generated == 0 {
		m.ttft.observe(now.Sub(r.Arrived).Seconds())
		if m.prefill != nil {
			m.prefill(r.PromptTokens, now.Sub(r.Admitted).Seconds())
		}
		return
	}
	m.itl.observe(now.Sub(r.Last).Seconds())
	if m.draft != nil {
		m.draft()
	}
}

// Finished records a request whose last token came at now.
func (m *Metrics) Finished(r Request, now time.Time) {
	m.e2e.observe(now.Sub(r.Arrived).Seconds())
	m.prefillTime.observe(r.First.Sub(r.Admitted).Seconds())
	m.decodeTime.observe(now.Sub(r.First).Seconds())
	m.inferenceTime.observe(now.Sub(r.Admitted).Seconds())
	if r.Generated > 1 {
		m.tpot.observe(now.Sub(r.First).Seconds() / float64(r.Generated-1))
	}
	m.promptTokens.observe(float64(r.PromptTokens))
	m.outputs.observe(float64(r.Generated))
	if m.success != nil {
		m.success()
	}
}
