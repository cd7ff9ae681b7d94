package collector

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/report"
)

// Bursts exports the last report of each burst.
type Bursts struct {
	mu   sync.Mutex
	last map[string]*report.Report
}

// NewBursts returns an empty set.
func NewBursts() *Bursts { return &Bursts{last: map[string]*report.Report{}} }

var (
	burstLatencyDesc   = prometheus.NewDesc(namespace+"_burst_latency_seconds", "Exact quantiles of the last burst's measured requests.", []string{"burst", "metric", "quantile"}, nil)
	burstRateDesc      = prometheus.NewDesc(namespace+"_burst_achieved_rate", "Requests per second the last burst actually sent.", []string{"burst"}, nil)
	burstOutputDesc    = prometheus.NewDesc(namespace+"_burst_output_tokens_per_second", "Output token throughput of the last burst.", []string{"burst"}, nil)
	burstGoodputDesc   = prometheus.NewDesc(namespace+"_burst_goodput_ratio", "Share of the last burst's requests that were good.", []string{"burst"}, nil)
	burstPassedDesc    = prometheus.NewDesc(namespace+"_burst_passed", "Whether the last burst passed every gate.", []string{"burst"}, nil)
	burstLastRunDesc   = prometheus.NewDesc(namespace+"_burst_last_run_timestamp_seconds", "When the last burst ended.", []string{"burst"}, nil)
	burstAbortedDesc   = prometheus.NewDesc(namespace+"_burst_aborted", "Whether the last burst was stopped early (safety brake or cancel).", []string{"burst"}, nil)
	burstSaturatedDesc = prometheus.NewDesc(namespace+"_burst_client_saturated", "Whether the last burst's dispatch delay p99 passed 5ms: its numbers describe the prober.", []string{"burst"}, nil)
	burstRegressDesc   = prometheus.NewDesc(namespace+"_burst_regression_ratio", "Last burst's quantile over the previous burst's (metric is like ttft_p99).", []string{"burst", "metric"}, nil)
	burstMaxRateDesc   = prometheus.NewDesc(namespace+"_burst_max_rate_under_slo", "Highest swept rate whose goodput ratio met the SLO target.", []string{"burst"}, nil)
	burstEnergyDesc    = prometheus.NewDesc(namespace+"_burst_energy_joules_per_output_token", "GPU energy of the last burst over its output tokens (warmup included), where llmprobe runs on the GPU node.", []string{"burst"}, nil)
)

// quantileLabel writes quantiles as Prometheus summaries do.
var quantileLabel = map[string]string{"p50": "0.5", "p90": "0.9", "p95": "0.95", "p99": "0.99", "p99.9": "0.999"}

// Set records a burst's newest report.
func (b *Bursts) Set(r *report.Report) {
	b.mu.Lock()
	b.last[r.Burst] = r
	b.mu.Unlock()
}

// Configure drops bursts no longer configured.
func (b *Bursts) Configure(cfg *config.Config) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for name := range b.last {
		if _, ok := cfg.Burst(name); !ok {
			delete(b.last, name)
		}
	}
}

// Describe implements prometheus.Collector.
func (b *Bursts) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{burstLatencyDesc, burstRateDesc, burstOutputDesc, burstGoodputDesc, burstPassedDesc, burstLastRunDesc, burstAbortedDesc, burstSaturatedDesc, burstRegressDesc, burstMaxRateDesc, burstEnergyDesc} {
		ch <- d
	}
}

func boolValue(v bool) float64 {
	if v {
		return 1
	}
	return 0
}

// Collect implements prometheus.Collector.
func (b *Bursts) Collect(ch chan<- prometheus.Metric) {
	b.mu.Lock()
	defer b.mu.Unlock()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for name, r := range b.last {
		for _, m := range config.BurstMetrics {
			s, ok := r.Latency[m]
			if !ok || s.Count == 0 {
				continue
			}
			for _, q := range config.BurstQuantiles {
				gauge(burstLatencyDesc, s.Quantile(q), name, m, quantileLabel[q])
			}
		}
		gauge(burstRateDesc, r.AchievedRate, name)
		gauge(burstOutputDesc, r.Throughput.OutputTokens, name)
		gauge(burstGoodputDesc, r.Goodput.Ratio, name)
		gauge(burstPassedDesc, boolValue(r.Passed), name)
		gauge(burstLastRunDesc, float64(r.End.UnixNano())/1e9, name)
		gauge(burstAbortedDesc, boolValue(r.Aborted), name)
		gauge(burstSaturatedDesc, boolValue(r.ClientSaturated), name)
		if r.Regression != nil {
			for _, m := range r.Regression.Metrics {
				gauge(burstRegressDesc, m.Ratio, name, m.Metric+"_"+m.Quantile)
			}
		}
		if r.MaxRateUnderSLO != nil {
			gauge(burstMaxRateDesc, *r.MaxRateUnderSLO, name)
		}
		if r.GPU != nil && r.GPU.JoulesPerOutputToken != nil {
			gauge(burstEnergyDesc, *r.GPU.JoulesPerOutputToken, name)
		}
	}
}
