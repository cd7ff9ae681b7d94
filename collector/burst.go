package collector

import (
	"maps"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/report"
)

// Bursts exports the last report of each burst, when the next run is due,
// and the reports that could not be written. It is the burst scheduler's
// Watcher.
type Bursts struct {
	mu            sync.Mutex
	last          map[string]*report.Report
	upgrade       map[string]*report.Report // each burst's last upgrade run
	due           map[string]time.Time
	writeFailures map[string]float64
	skipped       map[string]float64            // scheduled bursts' starts missed while a run ran
	autoscaling   map[string]config.Autoscaling // by configured target
}

// NewBursts returns an empty set.
func NewBursts() *Bursts {
	return &Bursts{last: map[string]*report.Report{}, upgrade: map[string]*report.Report{}, due: map[string]time.Time{}, writeFailures: map[string]float64{}, skipped: map[string]float64{}}
}

var (
	burstLatencyDesc   = prometheus.NewDesc(namespace+"_burst_latency_seconds", "Exact percentiles of the last burst's measured requests (p50 to p99.9).", []string{"burst", "metric", "percentile"}, nil)
	burstRateDesc      = prometheus.NewDesc(namespace+"_burst_achieved_rate", "Requests per second the last burst actually sent.", []string{"burst"}, nil)
	burstOutputDesc    = prometheus.NewDesc(namespace+"_burst_output_tokens_per_second", "Output token throughput of the last burst.", []string{"burst"}, nil)
	burstGoodputDesc   = prometheus.NewDesc(namespace+"_burst_goodput_ratio", "Share of the last burst's requests that were good.", []string{"burst"}, nil)
	burstPassedDesc    = prometheus.NewDesc(namespace+"_burst_passed", "Whether the last burst passed every gate.", []string{"burst"}, nil)
	burstLastRunDesc   = prometheus.NewDesc(namespace+"_burst_last_run_timestamp_seconds", "When the last burst ended.", []string{"burst"}, nil)
	burstAbortedDesc   = prometheus.NewDesc(namespace+"_burst_aborted", "Whether the last burst was stopped early (safety brake or cancel).", []string{"burst"}, nil)
	burstSaturatedDesc = prometheus.NewDesc(namespace+"_burst_client_saturated", "Whether the last burst's measurement error bound p99 passed a tenth of its tightest objective: its numbers describe the prober.", []string{"burst"}, nil)
	burstBoundDesc     = prometheus.NewDesc(namespace+"_burst_measurement_error_bound_seconds", "How much of each latency of the last burst llmprobe itself may have added: dispatch delay + Go scheduling latency + GC pauses + a self-probe's read delay (p99 and max).", []string{"burst", "percentile"}, nil)
	burstTTFTPartDesc  = prometheus.NewDesc(namespace+"_burst_ttft_component_seconds", "Exact percentiles of each TTFT component over the last burst's successful requests (component as in probe_ttft_component_seconds); absent for a component no request had.", []string{"burst", "component", "percentile"}, nil)
	burstRegressDesc   = prometheus.NewDesc(namespace+"_burst_regression_ratio", "Last burst's quantile over the previous burst's (metric is like ttft_p99).", []string{"burst", "metric"}, nil)
	burstMaxRateDesc   = prometheus.NewDesc(namespace+"_burst_max_rate_under_slo", "Highest swept rate whose goodput ratio met the SLO target.", []string{"burst"}, nil)
	burstEnergyDesc    = prometheus.NewDesc(namespace+"_burst_energy_joules_per_output_token", "GPU energy of the last burst over its output tokens (warmup included), where llmprobe runs on the GPU node.", []string{"burst"}, nil)
	burstDueDesc       = prometheus.NewDesc(namespace+"_burst_next_run_timestamp_seconds", "When the burst's next run is due; while it runs, when it should be done. Past it, the burst is overdue.", []string{"burst"}, nil)
	upgradeRegressDesc = prometheus.NewDesc(namespace+"_burst_upgrade_regression", "1 when the last upgrade run of the burst (schedule on_engine_change) found the quantile (metric is like tpot_p99) significantly slower (Mann-Whitney p < 0.05) than the burst's last report from before the engine change, by more than max_increase at 95 % confidence; else 0. Absent without such a report.", []string{"burst", "metric"}, nil)
	upgradeRatioDesc   = prometheus.NewDesc(namespace+"_burst_upgrade_ratio", "The last upgrade run's quantile over the one of the burst's last report from before the engine change (metric is like tpot_p99).", []string{"burst", "metric"}, nil)
	upgradeInfoDesc    = prometheus.NewDesc(namespace+"_burst_upgrade_info", "The engine change the burst's last upgrade run measured, from and to (engine, version, model as target_info has them); 1.", []string{"burst", "target", "from_engine", "from_version", "from_model", "to_engine", "to_version", "to_model"}, nil)
	skippedDesc        = prometheus.NewDesc(namespace+"_burst_skipped_starts_total", "Planned starts of the burst (schedule every or at) skipped because its previous run was still running.", []string{"burst"}, nil)
	writeFailuresDesc  = prometheus.NewDesc(namespace+"_report_write_failures_total", "Burst reports that could not be written to --storage.path.", []string{"burst"}, nil)
)

// Restore takes a burst's stored report after a restart; a burst that has
// a report already keeps it, since it is as new or newer.
func (b *Bursts) Restore(r *report.Report) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.last[r.Burst] == nil {
		b.last[r.Burst] = r
	}
	if r.Upgrade != nil && b.upgrade[r.Burst] == nil {
		b.upgrade[r.Burst] = r
	}
}

// HasUpgrade reports whether the burst has an upgrade run's report.
func (b *Bursts) HasUpgrade(burst string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.upgrade[burst] != nil
}

// Has reports whether the burst has a report.
func (b *Bursts) Has(burst string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.last[burst] != nil
}

// Due implements burst.Watcher.
func (b *Bursts) Due(burst string, at time.Time) {
	b.mu.Lock()
	if at.IsZero() {
		delete(b.due, burst) // nothing due: waiting for an engine change, or for nothing
	} else {
		b.due[burst] = at
	}
	b.mu.Unlock()
}

// Finished implements burst.Watcher: the report is the newest, and a failed
// write is counted.
func (b *Bursts) Finished(r *report.Report, saveErr error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.last[r.Burst] = r
	if r.Upgrade != nil {
		b.upgrade[r.Burst] = r
	}
	if saveErr != nil {
		b.writeFailures[r.Burst]++
	}
}

// Skipped implements burst.Watcher: starts missed by an overrun are counted.
func (b *Bursts) Skipped(burst string, starts int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.skipped[burst]; ok { // not a burst a reload removed meanwhile
		b.skipped[burst] += float64(starts)
	}
}

// Configure drops bursts no longer configured and starts the write-failure
// counter of new ones at zero, and the skipped-starts counter of new ones
// with every or at.
func (b *Bursts) Configure(cfg *config.Config) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.autoscaling = map[string]config.Autoscaling{}
	for _, t := range cfg.Targets {
		b.autoscaling[t.Name] = t.AutoscalingOf()
	}
	configured := func(name string) bool { _, ok := cfg.Burst(name); return ok }
	maps.DeleteFunc(b.last, func(name string, _ *report.Report) bool { return !configured(name) })
	maps.DeleteFunc(b.upgrade, func(name string, _ *report.Report) bool {
		br, ok := cfg.Burst(name)
		return !ok || br.Schedule.OnEngineChange == nil
	})
	maps.DeleteFunc(b.due, func(name string, _ time.Time) bool { return !configured(name) })
	maps.DeleteFunc(b.writeFailures, func(name string, _ float64) bool { return !configured(name) })
	maps.DeleteFunc(b.skipped, func(name string, _ float64) bool {
		br, ok := cfg.Burst(name)
		return !ok || !timed(br)
	})
	for _, br := range cfg.Bursts {
		if _, ok := b.writeFailures[br.Name]; !ok {
			b.writeFailures[br.Name] = 0
		}
		if _, ok := b.skipped[br.Name]; !ok && timed(br) {
			b.skipped[br.Name] = 0
		}
	}
}

// timed says br has planned starts to skip: every or at.
func timed(br config.Burst) bool {
	return br.Schedule.Every > 0 || len(br.Schedule.At) > 0
}

// Describe implements prometheus.Collector.
func (b *Bursts) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{burstLatencyDesc, burstRateDesc, burstOutputDesc, burstGoodputDesc, burstPassedDesc, burstLastRunDesc, burstAbortedDesc, burstSaturatedDesc, burstBoundDesc, burstTTFTPartDesc, burstRegressDesc, burstMaxRateDesc, burstEnergyDesc, burstDueDesc, upgradeRegressDesc, upgradeRatioDesc, upgradeInfoDesc, skippedDesc, writeFailuresDesc, targetMaxRateDesc} {
		ch <- d
	}
	for _, d := range sweepDescs {
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
	// A figure the report has no samples for is absent, not 0.
	figure := func(d *prometheus.Desc, v *float64, labels ...string) {
		if v != nil {
			gauge(d, *v, labels...)
		}
	}
	maxRates(ch, b.autoscaling, b.last, time.Now())
	for name, at := range b.due {
		gauge(burstDueDesc, float64(at.UnixNano())/1e9, name)
	}
	for name, n := range b.writeFailures {
		ch <- prometheus.MustNewConstMetric(writeFailuresDesc, prometheus.CounterValue, n, name)
	}
	for name, n := range b.skipped {
		ch <- prometheus.MustNewConstMetric(skippedDesc, prometheus.CounterValue, n, name)
	}
	for name, r := range b.upgrade {
		u := r.Upgrade
		gauge(upgradeInfoDesc, 1, name, r.Target, u.From.Engine, u.From.Version, u.From.Model, u.To.Engine, u.To.Version, u.To.Model)
		if u.BaselineID == "" {
			continue // no report from before the change: no verdict, not "no regression"
		}
		for _, c := range u.Changes {
			if c.Change == nil {
				continue // a side without samples: n/a
			}
			metric := c.Metric + "_" + c.Quantile
			gauge(upgradeRegressDesc, boolValue(c.Regression), name, metric)
			gauge(upgradeRatioDesc, 1+*c.Change, name, metric)
		}
	}
	for name, r := range b.last {
		for _, m := range config.BurstMetrics {
			s, ok := r.Latency[m]
			if !ok || s.Count == 0 {
				continue
			}
			for _, q := range config.BurstQuantiles {
				gauge(burstLatencyDesc, s.Quantile(q), name, m, q) // not "quantile": that label is a summary's
			}
		}
		figure(burstRateDesc, r.AchievedRate, name)
		figure(burstOutputDesc, r.Throughput.OutputTokens, name)
		figure(burstGoodputDesc, r.Goodput.Ratio, name)
		gauge(burstPassedDesc, boolValue(r.Passed), name)
		gauge(burstLastRunDesc, float64(r.End.UnixNano())/1e9, name)
		gauge(burstAbortedDesc, boolValue(r.Aborted), name)
		gauge(burstSaturatedDesc, boolValue(r.ClientSaturated), name)
		if e := r.ErrorBound; e != nil { // none in reports older than the bound
			figure(burstBoundDesc, e.P99, name, "p99")
			figure(burstBoundDesc, e.Max, name, "max")
		}
		if bd := r.TTFTBreakdown; bd != nil {
			for _, c := range bd.Components {
				for _, q := range config.BurstQuantiles {
					gauge(burstTTFTPartDesc, c.Summary.Quantile(q), name, c.Component, q)
				}
			}
		}
		if r.Regression != nil {
			for _, m := range r.Regression.Metrics {
				figure(burstRegressDesc, m.Ratio, name, m.Metric+"_"+m.Quantile)
			}
		}
		if r.MaxRateUnderSLO != nil {
			gauge(burstMaxRateDesc, *r.MaxRateUnderSLO, name)
		}
		if r.GPU != nil && r.GPU.JoulesPerOutputToken != nil {
			gauge(burstEnergyDesc, *r.GPU.JoulesPerOutputToken, name)
		}
		collectSweep(ch, name, r)
	}
}
