//go:build linux && cgo

// Package nvmlmock is go-nvml's DGX H100 mock with a reading on every call
// llmprobe makes, for tests of the GPU collector and of the dashboards.
package nvmlmock

import (
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

const gib = 1 << 30

// H100 is go-nvml's 8-GPU DGX H100 mock with known readings on every device:
// the mock server only answers identity and memory, so this sets the rest.
type H100 struct {
	*server.Server
	// Events feeds the XID event set: send an event to raise it.
	Events chan nvml.EventData
	// Energy is device i's energy counter in mJ.
	Energy func(i int) uint64
}

func NewH100() *H100 {
	h := &H100{Server: dgxh100.New(), Events: make(chan nvml.EventData, 16)}
	h.Energy = func(i int) uint64 { return 123456789 + uint64(i) }
	for i, d := range h.Devices {
		dev := d.(*server.Device)
		dev.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{Gpu: 75, Memory: 40}, nvml.SUCCESS }
		dev.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) {
			return nvml.Memory_v2{Total: 80 * gib, Used: uint64(i+1) * gib, Reserved: 512 << 20, Free: 80*gib - uint64(i+1)*gib}, nvml.SUCCESS
		}
		dev.GetPowerUsageFunc = func() (uint32, nvml.Return) { return uint32(300000 + i*1000), nvml.SUCCESS }
		dev.GetEnforcedPowerLimitFunc = func() (uint32, nvml.Return) { return 700000, nvml.SUCCESS }
		dev.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { return h.Energy(i), nvml.SUCCESS }
		dev.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return uint32(40 + i), nvml.SUCCESS }
		dev.GetClockInfoFunc = func(c nvml.ClockType) (uint32, nvml.Return) {
			return map[nvml.ClockType]uint32{nvml.CLOCK_SM: 1980, nvml.CLOCK_MEM: 2619, nvml.CLOCK_GRAPHICS: 1755}[c], nvml.SUCCESS
		}
		dev.GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) {
			if i == 0 {
				return nvml.ClocksEventReasonSwPowerCap | nvml.ClocksThrottleReasonHwThermalSlowdown, nvml.SUCCESS
			}
			return 0, nvml.SUCCESS
		}
		dev.GetPcieThroughputFunc = func(nvml.PcieUtilCounter) (uint32, nvml.Return) { return 1000, nvml.SUCCESS }
		dev.GetPcieReplayCounterFunc = func() (int, nvml.Return) { return 3, nvml.SUCCESS }
		dev.GetTotalEccErrorsFunc = func(typ nvml.MemoryErrorType, _ nvml.EccCounterType) (uint64, nvml.Return) {
			if typ == nvml.MEMORY_ERROR_TYPE_UNCORRECTED && i == 1 {
				return 0, nvml.ERROR_NOT_SUPPORTED
			}
			return 5, nvml.SUCCESS
		}
		dev.RegisterEventsFunc = func(uint64, nvml.EventSet) nvml.Return { return nvml.SUCCESS }
	}
	h.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) {
		return &mock.EventSet{
			WaitFunc: func(ms uint32) (nvml.EventData, nvml.Return) {
				select {
				case ev := <-h.Events:
					return ev, nvml.SUCCESS
				case <-time.After(time.Duration(ms) * time.Millisecond):
					return nvml.EventData{}, nvml.ERROR_TIMEOUT
				}
			},
			FreeFunc: func() nvml.Return { return nvml.SUCCESS },
		}, nvml.SUCCESS
	}
	return h
}

// Device is the i-th GPU, to change its readings.
func (h *H100) Device(i int) *server.Device { return h.Devices[i].(*server.Device) }
