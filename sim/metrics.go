package sim

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// engineMetrics are the server-side metrics, named as vLLM names them, so
// dashboards can put the engine's view next to llmprobe's.
type engineMetrics struct {
	ttft, itl, e2e, queueTime   prometheus.Observer
	promptHist, generationHist  prometheus.Observer
	promptTotal, generationTotl prometheus.Counter
	success                     *prometheus.CounterVec
}

func newEngineMetrics(e *Engine) *engineMetrics {
	labels := prometheus.Labels{"model_name": e.cfg.Model, "engine": "0"}
	hist := func(name, help string, buckets []float64) prometheus.Observer {
		h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets, ConstLabels: labels})
		e.reg.MustRegister(h)
		return h
	}
	counter := func(name, help string) prometheus.Counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels})
		e.reg.MustRegister(c)
		return c
	}
	gauge := func(name, help string, f func(Stats) float64) {
		e.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels}, func() float64 { return f(e.Stats()) }))
	}
	tokenBuckets := []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000}
	m := &engineMetrics{
		ttft:           hist("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560}),
		itl:            hist("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80}),
		e2e:            hist("vllm:e2e_request_latency_seconds", "Histogram of end to end request latency in seconds.", []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680}),
		queueTime:      hist("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680}),
		promptHist:     hist("vllm:request_prompt_tokens", "Number of prefill tokens processed.", tokenBuckets),
		generationHist: hist("vllm:request_generation_tokens", "Number of generation tokens processed.", tokenBuckets),
		promptTotal:    counter("vllm:prompt_tokens_total", "Number of prefill tokens processed."),
		generationTotl: counter("vllm:generation_tokens_total", "Number of generation tokens processed."),
		success: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vllm:request_success_total", Help: "Count of successfully processed requests.", ConstLabels: labels,
		}, []string{"finished_reason"}),
	}
	e.reg.MustRegister(m.success)
	gauge("vllm:num_requests_running", "Number of requests in model execution batches.", func(s Stats) float64 { return float64(s.Running) })
	gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", func(s Stats) float64 { return float64(s.Waiting) })
	gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", func(s Stats) float64 {
		return float64(s.Running) / float64(e.cfg.MaxBatch)
	})
	return m
}

func (m *engineMetrics) finished(s *sequence, now time.Time) {
	m.e2e.Observe(now.Sub(s.arrived).Seconds())
	m.promptHist.Observe(float64(s.promptTokens))
	m.generationHist.Observe(float64(s.generated))
	m.promptTotal.Add(float64(s.promptTokens))
	m.generationTotl.Add(float64(s.generated))
	m.success.WithLabelValues("length").Inc()
}
