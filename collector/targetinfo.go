package collector

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmprobe/llmprobe/prober"
)

var targetInfoDesc = prometheus.NewDesc(namespace+"_target_info",
	"What each target says about itself (/v1/models, version endpoint, Server header); always 1.",
	[]string{"target", "model", "engine", "engine_version", "server"}, nil)

// TargetInfo exports llmprobe_target_info from the clients' last refresh.
// Every label value was sanitised and bounded by the prober.
type TargetInfo struct {
	clients func() []*prober.Client
}

// NewTargetInfo reads the clients on every scrape; it never calls the network.
func NewTargetInfo(clients func() []*prober.Client) *TargetInfo {
	return &TargetInfo{clients: clients}
}

// Describe implements prometheus.Collector.
func (t *TargetInfo) Describe(ch chan<- *prometheus.Desc) { ch <- targetInfoDesc }

// Collect implements prometheus.Collector.
func (t *TargetInfo) Collect(ch chan<- prometheus.Metric) {
	for _, c := range t.clients() {
		info := c.Info()
		if info.Updated.IsZero() {
			continue
		}
		ch <- prometheus.MustNewConstMetric(targetInfoDesc, prometheus.GaugeValue, 1,
			c.Target().Name, c.Model(), info.Engine, info.EngineVersion, info.Server)
	}
}
