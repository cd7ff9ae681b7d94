//go:build !(linux && cgo)

package gpu

import (
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmprobe/llmprobe/report"
)

// Collector is the stand-in of a build without cgo (or not for Linux): NVML cannot
// be loaded, so the collector only says so.
type Collector struct {
	logger log.Logger
}

// New returns the stand-in.
func New(logger log.Logger, _ time.Duration) *Collector { return &Collector{logger: logger} }

// Start logs once that GPU metrics are unavailable.
func (g *Collector) Start() {
	level.Info(g.logger).Log("msg", "GPU metrics unavailable: this llmprobe was built without cgo; build with CGO_ENABLED=1 on Linux for NVML")
}

// Stop does nothing.
func (g *Collector) Stop() {}

// Describe implements prometheus.Collector.
func (g *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- collectorSuccessDesc
	ch <- collectorDurationDesc
}

// Collect reports the collector as failing.
func (g *Collector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(collectorDurationDesc, prometheus.GaugeValue, 0, "gpu")
	ch <- prometheus.MustNewConstMetric(collectorSuccessDesc, prometheus.GaugeValue, 0, "gpu")
}

// BeginBurst has no GPU facts to give.
func (g *Collector) BeginBurst() func(outputTokens int) *report.GPUFacts {
	return func(int) *report.GPUFacts { return nil }
}
