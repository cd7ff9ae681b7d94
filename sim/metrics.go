package sim

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// family is the metric names one engine exports; "" is a metric it lacks.
type family struct {
	ownedBy                              string
	ttft, itl, e2e, queue                string // histograms, seconds
	running, waiting, kvUsage            string // gauges
	promptTokens, outputTokens           string // counters
	promptSeconds, outputSeconds         string // counters: time spent reading prompts, predicting
	requestTokenHistograms, successCount bool   // vLLM's per-request token histograms and success counter
}

// Families are the engines the sim can pose as, named as in
// llmprobe_target_info's engine label.
var families = map[string]family{
	"vllm": {ownedBy: "vllm",
		ttft: "vllm:time_to_first_token_seconds", itl: "vllm:inter_token_latency_seconds", e2e: "vllm:e2e_request_latency_seconds", queue: "vllm:request_queue_time_seconds",
		running: "vllm:num_requests_running", waiting: "vllm:num_requests_waiting", kvUsage: "vllm:kv_cache_usage_perc",
		promptTokens: "vllm:prompt_tokens_total", outputTokens: "vllm:generation_tokens_total", requestTokenHistograms: true, successCount: true},
	"sglang": {ownedBy: "sglang",
		ttft: "sglang:time_to_first_token_seconds", itl: "sglang:inter_token_latency_seconds", e2e: "sglang:e2e_request_latency_seconds", queue: "sglang:queue_time_seconds",
		running: "sglang:num_running_reqs", waiting: "sglang:num_queue_reqs", kvUsage: "sglang:token_usage",
		promptTokens: "sglang:prompt_tokens_total", outputTokens: "sglang:generation_tokens_total"},
	"tgi": {ownedBy: "tgi",
		e2e: "tgi_request_duration", queue: "tgi_request_queue_duration",
		running: "tgi_batch_current_size", waiting: "tgi_queue_size"},
	"llamacpp": {ownedBy: "llamacpp",
		running: "llamacpp:requests_processing", waiting: "llamacpp:requests_deferred",
		promptTokens: "llamacpp:prompt_tokens_total", outputTokens: "llamacpp:tokens_predicted_total",
		promptSeconds: "llamacpp:prompt_seconds_total", outputSeconds: "llamacpp:tokens_predicted_seconds_total"},
}

func familyOf(name string) (family, error) {
	if name == "" {
		return families["vllm"], nil
	}
	f, ok := families[name]
	if !ok {
		return family{}, fmt.Errorf("family %q must be one of vllm, sglang, tgi, llamacpp", name)
	}
	return f, nil
}

type discard struct{}

func (discard) Observe(float64) {}
func (discard) Add(float64)     {}

// adder is the part of a counter the engine uses.
type adder interface{ Add(float64) }

// engineMetrics are the server-side metrics, named as the engine the sim
// poses as names them, so dashboards can put the engine's view next to
// llmprobe's.
type engineMetrics struct {
	ttft, itl, e2e, queueTime    prometheus.Observer
	promptHist, generationHist   prometheus.Observer
	promptTotal, generationTotal adder
	promptSeconds, outputSeconds adder
	success                      *prometheus.CounterVec
}

func newEngineMetrics(e *Engine) *engineMetrics {
	f, _ := familyOf(e.cfg.Family) // validated
	labels := prometheus.Labels{"model_name": e.cfg.Model}
	if f.ownedBy == "vllm" {
		labels["engine"] = "0"
	}
	hist := func(name, help string, buckets []float64) prometheus.Observer {
		if name == "" {
			return discard{}
		}
		h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets, ConstLabels: labels})
		e.reg.MustRegister(h)
		return h
	}
	counter := func(name, help string) adder {
		if name == "" {
			return discard{}
		}
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels})
		e.reg.MustRegister(c)
		return c
	}
	gauge := func(name, help string, v func(Stats) float64) {
		if name != "" {
			e.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels}, func() float64 { return v(e.Stats()) }))
		}
	}
	latencyBuckets := []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680}
	tokenBuckets := []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000}
	m := &engineMetrics{
		ttft:            hist(f.ttft, "Histogram of time to first token in seconds.", []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560}),
		itl:             hist(f.itl, "Histogram of inter-token latency in seconds.", []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80}),
		e2e:             hist(f.e2e, "Histogram of end to end request latency in seconds.", latencyBuckets),
		queueTime:       hist(f.queue, "Histogram of time spent waiting before the first batch.", latencyBuckets),
		promptHist:      discard{},
		generationHist:  discard{},
		promptTotal:     counter(f.promptTokens, "Number of prefill tokens processed."),
		generationTotal: counter(f.outputTokens, "Number of generation tokens processed."),
		promptSeconds:   counter(f.promptSeconds, "Prompt process time."),
		outputSeconds:   counter(f.outputSeconds, "Predict process time."),
	}
	if f.requestTokenHistograms {
		m.promptHist = hist("vllm:request_prompt_tokens", "Number of prefill tokens processed.", tokenBuckets)
		m.generationHist = hist("vllm:request_generation_tokens", "Number of generation tokens processed.", tokenBuckets)
	}
	if f.successCount {
		m.success = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vllm:request_success_total", Help: "Count of successfully processed requests.", ConstLabels: labels,
		}, []string{"finished_reason"})
		e.reg.MustRegister(m.success)
	}
	gauge(f.running, "Number of requests in model execution batches.", func(s Stats) float64 { return float64(s.Running) })
	gauge(f.waiting, "Number of requests waiting to be processed.", func(s Stats) float64 { return float64(s.Waiting) })
	gauge(f.kvUsage, "KV-cache usage. 1 means 100 percent usage.", func(s Stats) float64 {
		return float64(s.Running) / float64(e.cfg.MaxBatch)
	})
	return m
}

func (m *engineMetrics) finished(s *sequence, now time.Time) {
	m.e2e.Observe(now.Sub(s.arrived).Seconds())
	m.promptHist.Observe(float64(s.promptTokens))
	m.generationHist.Observe(float64(s.generated))
	m.promptTotal.Add(float64(s.promptTokens))
	m.generationTotal.Add(float64(s.generated))
	m.promptSeconds.Add(s.firstToken.Sub(s.admitted).Seconds())
	m.outputSeconds.Add(now.Sub(s.firstToken).Seconds())
	if m.success != nil {
		m.success.WithLabelValues("length").Inc()
	}
}
