//go:build linux && cgo

package main

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/llmprobe/llmprobe/gpu"
)

// mockGPUExporter serves llmprobe's GPU collector over go-nvml's 8-GPU DGX
// H100 mock, for Prometheus to scrape: the GPU dashboard's data on a machine
// without a GPU. The mock answers identity and memory; the readings NVML
// would give are set here, GPU 0 power-capped, and one XID 79 is raised.
func mockGPUExporter(t *testing.T) string {
	t.Helper()
	h := dgxh100.New()
	events := make(chan nvml.EventData, 1)
	for i, d := range h.Devices {
		dev := d.(*server.Device)
		dev.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{Gpu: 60, Memory: 30}, nvml.SUCCESS }
		dev.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) {
			return nvml.Memory_v2{Total: 80 << 30, Used: 20 << 30, Free: 60 << 30}, nvml.SUCCESS
		}
		dev.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 350000, nvml.SUCCESS }
		dev.GetEnforcedPowerLimitFunc = func() (uint32, nvml.Return) { return 700000, nvml.SUCCESS }
		dev.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { return uint64(time.Now().UnixMilli()) * 350, nvml.SUCCESS }
		dev.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 55, nvml.SUCCESS }
		dev.GetClockInfoFunc = func(nvml.ClockType) (uint32, nvml.Return) { return 1980, nvml.SUCCESS }
		dev.GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) {
			if i == 0 {
				return nvml.ClocksEventReasonSwPowerCap, nvml.SUCCESS
			}
			return 0, nvml.SUCCESS
		}
		dev.GetPcieThroughputFunc = func(nvml.PcieUtilCounter) (uint32, nvml.Return) { return 2048, nvml.SUCCESS }
		dev.GetPcieReplayCounterFunc = func() (int, nvml.Return) { return 0, nvml.SUCCESS }
		dev.GetTotalEccErrorsFunc = func(nvml.MemoryErrorType, nvml.EccCounterType) (uint64, nvml.Return) { return 0, nvml.SUCCESS }
		dev.RegisterEventsFunc = func(uint64, nvml.EventSet) nvml.Return { return nvml.SUCCESS }
	}
	h.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) {
		return &mock.EventSet{
			WaitFunc: func(ms uint32) (nvml.EventData, nvml.Return) {
				select {
				case ev := <-events:
					return ev, nvml.SUCCESS
				case <-time.After(time.Duration(ms) * time.Millisecond):
					return nvml.EventData{}, nvml.ERROR_TIMEOUT
				}
			},
			FreeFunc: func() nvml.Return { return nvml.SUCCESS },
		}, nvml.SUCCESS
	}
	g := gpu.NewWithLibrary(h, log.NewNopLogger(), 2*time.Second)
	g.Start()
	events <- nvml.EventData{Device: h.Devices[0], EventType: nvml.EventTypeXidCriticalError, EventData: 79}
	reg := prometheus.NewRegistry()
	reg.MustRegister(g)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(func() { srv.Close(); g.Stop() })
	return srv.Listener.Addr().String()
}
