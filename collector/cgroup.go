package collector

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmprobe/llmprobe/lib/cgroup"
)

var (
	cgroupThrottledDesc = prometheus.NewDesc(namespace+"_cgroup_cpu_throttled_seconds_total",
		"Time the CFS quota of llmprobe's cgroup held it off its CPUs (cpu.stat throttled_usec, v1 throttled_time): every request in flight carried the pause.", nil, nil)
	cgroupPeriodsDesc = prometheus.NewDesc(namespace+"_cgroup_cpu_throttled_periods_total",
		"Quota periods in which llmprobe's cgroup was throttled (cpu.stat nr_throttled).", nil, nil)
)

// Cgroup exports the CPU throttling of llmprobe's cgroup, read at each
// scrape; nothing where no cgroup's cpu.stat can be read.
type Cgroup struct{ stat *cgroup.Stat }

// NewCgroup finds the cgroup under root ("/" on a live system).
func NewCgroup(root string) *Cgroup {
	stat, err := cgroup.Open(root)
	if err != nil {
		return &Cgroup{}
	}
	return &Cgroup{stat: stat}
}

// Describe implements prometheus.Collector.
func (c *Cgroup) Describe(ch chan<- *prometheus.Desc) {
	ch <- cgroupThrottledDesc
	ch <- cgroupPeriodsDesc
}

// Collect implements prometheus.Collector.
func (c *Cgroup) Collect(ch chan<- prometheus.Metric) {
	if c.stat == nil {
		return
	}
	t, err := c.stat.Read()
	if err != nil {
		return // n/a this scrape, never a fake 0
	}
	ch <- prometheus.MustNewConstMetric(cgroupThrottledDesc, prometheus.CounterValue, t.Time.Seconds())
	ch <- prometheus.MustNewConstMetric(cgroupPeriodsDesc, prometheus.CounterValue, float64(t.Periods))
}
