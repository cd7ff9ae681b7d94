package collector

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmprobe/llmprobe/report"
)

// A sweep's curve is exported per step of the last sweep only, by its place
// in offered-rate order: a burst has at most config.MaxSweepSteps linear
// steps and ten bisecting ones, so the step label stays bounded and the
// next sweep reuses the same series.
var (
	sweepRateDesc    = prometheus.NewDesc(namespace+"_burst_sweep_step_offered_rate", "Offered rate of each step of the burst's last sweep (step: its place by offered rate, from 0).", []string{"burst", "step"}, nil)
	sweepLatencyDesc = prometheus.NewDesc(namespace+"_burst_sweep_step_latency_seconds", "Exact p50 and p99 of TTFT and TPOT at each step of the burst's last sweep: its QPS–latency curve.", []string{"burst", "step", "metric", "percentile"}, nil)
	sweepOutputDesc  = prometheus.NewDesc(namespace+"_burst_sweep_step_output_tokens_per_second", "Output tokens per second each step of the burst's last sweep achieved.", []string{"burst", "step"}, nil)
	sweepPassedDesc  = prometheus.NewDesc(namespace+"_burst_sweep_step_passed", "1 where the step's goodput lower bound (Wilson, 95 %) reached the target ratio.", []string{"burst", "step"}, nil)
	sweepFailingDesc = prometheus.NewDesc(namespace+"_burst_max_rate_failing", "From a sweep: the lowest rate above max_rate_under_slo that missed the SLO; the max lies between. Absent when no step failed.", []string{"burst"}, nil)
	instancesDesc    = prometheus.NewDesc(namespace+"_burst_capacity_instances", "Instances the burst's capacity target rate needs with its headroom, from its last sweep's max rate under SLO.", []string{"burst"}, nil)
	gpusDesc         = prometheus.NewDesc(namespace+"_burst_capacity_gpus", "GPUs those instances have, where the GPUs of an instance are known.", []string{"burst"}, nil)
	costDesc         = prometheus.NewDesc(namespace+"_burst_cost_per_million_tokens", "Price of a million output (or total) tokens at the last sweep's max rate under SLO, in the unit of cost:.", []string{"burst", "tokens"}, nil)
)

var sweepDescs = []*prometheus.Desc{sweepRateDesc, sweepLatencyDesc, sweepOutputDesc, sweepPassedDesc, sweepFailingDesc, instancesDesc, gpusDesc, costDesc}

// collectSweep exports the curve, knee, capacity and cost of r's sweep.
func collectSweep(ch chan<- prometheus.Metric, name string, r *report.Report) {
	gauge := func(d *prometheus.Desc, v *float64, labels ...string) {
		if v != nil {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, *v, labels...)
		}
	}
	steps := slices.Clone(r.Sweep)
	slices.SortStableFunc(steps, func(a, b report.SweepStep) int { return cmp.Compare(a.Rate, b.Rate) })
	for i, s := range steps {
		step := strconv.Itoa(i)
		gauge(sweepRateDesc, &s.Rate, name, step)
		for _, m := range []string{"ttft", "tpot"} {
			for _, q := range []string{"p50", "p99"} {
				gauge(sweepLatencyDesc, s.Latency[m].Measured(q), name, step, m, q)
			}
		}
		gauge(sweepOutputDesc, s.Throughput.OutputTokens, name, step)
		passed := boolValue(s.Passed)
		gauge(sweepPassedDesc, &passed, name, step)
	}
	k := r.Knee
	if k == nil {
		return
	}
	gauge(sweepFailingDesc, k.Failing, name)
	if p := k.Capacity; p != nil {
		n := float64(p.Instances)
		gauge(instancesDesc, &n, name)
		if p.GPUs != nil {
			g := float64(*p.GPUs)
			gauge(gpusDesc, &g, name)
		}
	}
	if c := k.Cost; c != nil {
		gauge(costDesc, c.PerMillionOutput, name, "output")
		gauge(costDesc, c.PerMillionTotal, name, "total")
	}
}
