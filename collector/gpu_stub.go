//go:build !(linux && cgo)

package collector

import (
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmprobe/llmprobe/report"
)

// GPU is the stand-in of a build without cgo (or not for Linux): NVML cannot
// be loaded, so the collector only says so.
type GPU struct {
	logger log.Logger
}

// NewGPU returns the stand-in.
func NewGPU(logger log.Logger, _ time.Duration) *GPU { return &GPU{logger: logger} }

// Start logs once that GPU metrics are unavailable.
func (g *GPU) Start() {
	level.Info(g.logger).Log("msg", "GPU metrics unavailable: this llmprobe was built without cgo; build with CGO_ENABLED=1 on Linux for NVML")
}

// Stop does nothing.
func (g *GPU) Stop() {}

// Describe implements prometheus.Collector.
func (g *GPU) Describe(ch chan<- *prometheus.Desc) {
	ch <- collectorSuccessDesc
	ch <- collectorDurationDesc
}

// Collect reports the collector as failing.
func (g *GPU) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(collectorDurationDesc, prometheus.GaugeValue, 0, "gpu")
	ch <- prometheus.MustNewConstMetric(collectorSuccessDesc, prometheus.GaugeValue, 0, "gpu")
}

// BeginBurst has no GPU facts to give.
func (g *GPU) BeginBurst() func(outputTokens int) *report.GPUFacts {
	return func(int) *report.GPUFacts { return nil }
}
