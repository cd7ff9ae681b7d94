// Package gpu exports the node's GPUs through NVML as a client_golang
// collector, and their energy over a burst.
package gpu

import (
	"github.com/prometheus/client_golang/prometheus"
)

const namespace = "llmprobe"

func boolValue(v bool) float64 {
	if v {
		return 1
	}
	return 0
}

// Self-metrics per collector, as node_exporter has them: a broken collector
// is a metric, not a crash.
var (
	collectorSuccessDesc  = prometheus.NewDesc(namespace+"_collector_success", "Whether the collector's last scrape succeeded.", []string{"collector"}, nil)
	collectorDurationDesc = prometheus.NewDesc(namespace+"_collector_duration_seconds", "How long the collector's last scrape took.", []string{"collector"}, nil)
)

var gpuLabels = []string{"gpu", "uuid"}

func gpuDesc(name, help string, extra ...string) *prometheus.Desc {
	return prometheus.NewDesc(namespace+"_gpu_"+name, help, append(append([]string{}, gpuLabels...), extra...), nil)
}

// GPU metric descriptors, in base units.
var (
	gpuInfoDesc        = gpuDesc("info", "GPU facts; always 1.", "name", "pci_bus_id", "driver_version", "cuda_version")
	gpuUtilDesc        = gpuDesc("utilization_ratio", "Share of the last sample period the GPU was busy.")
	gpuMemUtilDesc     = gpuDesc("memory_utilization_ratio", "Share of the last sample period device memory was read or written.")
	gpuMemUsedDesc     = gpuDesc("memory_used_bytes", "Device memory in use.")
	gpuMemTotalDesc    = gpuDesc("memory_total_bytes", "Device memory in total.")
	gpuMemReservedDesc = gpuDesc("memory_reserved_bytes", "Device memory reserved by the driver and firmware.")
	gpuPowerDesc       = gpuDesc("power_watts", "Power draw.")
	gpuPowerLimitDesc  = gpuDesc("power_limit_watts", "Enforced power limit.")
	gpuEnergyDesc      = gpuDesc("energy_joules_total", "Energy consumed since the driver was loaded.")
	gpuTempDesc        = gpuDesc("temperature_celsius", "Temperature by sensor.", "sensor")
	gpuClockDesc       = gpuDesc("clock_hz", "Current clock by domain (sm, memory, graphics).", "clock")
	gpuClockReasonDesc = gpuDesc("clocks_event_reason_active", "Whether a clocks event (throttle) reason is active.", "reason")
	gpuPCIeDesc        = gpuDesc("pcie_throughput_bytes_per_second", "PCIe throughput over the last 20 ms, by direction.", "direction")
	gpuPCIeReplayDesc  = gpuDesc("pcie_replay_errors_total", "PCIe replay counter.")
	gpuECCDesc         = gpuDesc("ecc_errors_total", "ECC errors since the driver was loaded, by type (corrected, uncorrected).", "type")
	gpuXIDDesc         = gpuDesc("xid_errors_total", "XID errors seen by llmprobe's event listener, by XID code.", "xid")
	gpuXIDLastSeenDesc = gpuDesc("xid_last_seen_timestamp_seconds", "When the last XID error was seen.")
	gpuMIGDesc         = gpuDesc("mig_info", "A MIG device of the GPU; always 1.", "mig_uuid", "gpu_instance_id", "compute_instance_id")
	gpuDescs           = []*prometheus.Desc{gpuInfoDesc, gpuUtilDesc, gpuMemUtilDesc, gpuMemUsedDesc, gpuMemTotalDesc, gpuMemReservedDesc, gpuPowerDesc, gpuPowerLimitDesc, gpuEnergyDesc, gpuTempDesc, gpuClockDesc, gpuClockReasonDesc, gpuPCIeDesc, gpuPCIeReplayDesc, gpuECCDesc, gpuXIDDesc, gpuXIDLastSeenDesc, gpuMIGDesc}
)

// maxXIDCodesPerGPU caps the xid label set: the codes come from the driver.
const maxXIDCodesPerGPU = 64
