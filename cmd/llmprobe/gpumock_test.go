//go:build linux && cgo

package main

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/llmprobe/llmprobe/collector"
	"github.com/llmprobe/llmprobe/internal/nvmlmock"
)

// gpuNode serves llmprobe's GPU collector over go-nvml's 8-GPU H100 mock,
// as llmprobe on a GPU node would, and returns its host:port. GPU 0 raises
// XID 79 (fallen off the bus) once scraping has begun, so the XID panel has
// an increase to show.
func gpuNode(t *testing.T) string {
	t.Helper()
	h := nvmlmock.NewH100()
	g := collector.NewGPUFrom(h, log.NewNopLogger(), 2*time.Second)
	g.Start()
	t.Cleanup(g.Stop)
	time.AfterFunc(3*time.Second, func() {
		h.Events <- nvml.EventData{Device: h.Devices[0], EventType: nvml.EventTypeXidCriticalError, EventData: 79}
	})
	reg := prometheus.NewRegistry()
	reg.MustRegister(g)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}
