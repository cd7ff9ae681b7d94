package collector

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmprobe/llmprobe/enginemetrics"
	"github.com/llmprobe/llmprobe/target"
)

var (
	engineSuccessDesc = prometheus.NewDesc(namespace+"_engine_scrape_success",
		"Whether the last read of the target's engine metrics page (engine_metrics) succeeded.", []string{"target"}, nil)
	engineDurationDesc = prometheus.NewDesc(namespace+"_engine_scrape_duration_seconds",
		"How long the last read of the target's engine metrics page took.", []string{"target"}, nil)
	engineLatencyDesc = prometheus.NewDesc(namespace+"_engine_latency_seconds",
		"The engine's own latency percentiles between its last two scrapes, server-wide (all clients), estimated from its histogram buckets as histogram_quantile does; absent where the engine has no such histogram.",
		[]string{"target", "metric", "percentile"}, nil)
	engineMeanDesc = prometheus.NewDesc(namespace+"_engine_latency_mean_seconds",
		"The engine's own mean latency between its last two scrapes, server-wide (all clients), exact from its sums and counts (llama.cpp: from its counters).",
		[]string{"target", "metric"}, nil)
	engineRateDesc = prometheus.NewDesc(namespace+"_engine_request_rate",
		"Requests per second the engine finished between its last two scrapes, server-wide (all clients): its end-to-end histogram's count over the time between the reads. One instance's, the one engine_metrics reads.",
		[]string{"target"}, nil)
)

// Engine exports each target's engine metrics state, as its last scrape
// left it; it never calls the network. Labels are bounded: the configured
// targets, the enginemetrics figure names and three percentiles.
type Engine struct {
	set *target.Set
}

// NewEngine reads the set's engine states on every scrape.
func NewEngine(set *target.Set) *Engine { return &Engine{set: set} }

// Describe implements prometheus.Collector.
func (e *Engine) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{engineSuccessDesc, engineDurationDesc, engineLatencyDesc, engineMeanDesc, engineRateDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (e *Engine) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, c := range e.set.Clients() {
		name := c.Target().Name
		st, ok := e.set.Engine(name)
		if !ok || st.Last == nil {
			continue
		}
		gauge(engineSuccessDesc, boolValue(st.Last.OK()), name)
		gauge(engineDurationDesc, st.Last.Duration, name)
		if st.Window == nil || st.Window.Error != "" {
			continue // n/a is an absent series, never 0
		}
		for _, f := range st.Window.Figures {
			if f.Metric == enginemetrics.MetricE2E && f.Count != nil && *f.Count >= 0 && st.Window.Before != nil && st.Window.After != nil {
				if d := st.Window.After.Time.Sub(st.Window.Before.Time).Seconds(); d > 0 {
					gauge(engineRateDesc, *f.Count/d, name)
				}
			}
			if f.NA != "" {
				continue
			}
			if f.Mean != nil {
				gauge(engineMeanDesc, *f.Mean, name, f.Metric)
			}
			for _, q := range f.Quantiles {
				gauge(engineLatencyDesc, q.Value, name, f.Metric, q.Name)
			}
		}
	}
}
