//go:build linux && cgo

package gpu

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/prometheus/client_golang/prometheus"
)

// deviceScrape is one scrape of one GPU: where its series go, the labels
// they share, and the errors met on the way (a reading the device does not
// support is absent, not an error).
type deviceScrape struct {
	emit      func(prometheus.Metric)
	idx, uuid string
	dev       nvml.Device
	errs      []error
}

// scrapeDevice exports GPU idx's series; an error names every reading that
// failed, the others still exported.
func (g *Collector) scrapeDevice(emit func(prometheus.Metric), idx string, dev nvml.Device, driver, cuda string) error {
	uuid, ret := dev.GetUUID()
	if _, err := nvmlErr("uuid", ret); err != nil {
		return err
	}
	g.mu.Lock()
	g.gpuIndex[uuid] = idx
	g.mu.Unlock()
	d := &deviceScrape{emit: emit, idx: idx, uuid: uuid, dev: dev}
	d.identity(driver, cuda)
	d.load()
	d.clocks()
	d.links()
	d.errs = append(d.errs, g.scrapeMIG(d))
	return errors.Join(d.errs...)
}

func (d *deviceScrape) gauge(desc *prometheus.Desc, v float64, extra ...string) {
	d.emit(prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, append([]string{d.idx, d.uuid}, extra...)...))
}

func (d *deviceScrape) counter(desc *prometheus.Desc, v float64, extra ...string) {
	d.emit(prometheus.MustNewConstMetric(desc, prometheus.CounterValue, v, append([]string{d.idx, d.uuid}, extra...)...))
}

// read records an error other than NOT_SUPPORTED and reports whether the
// value is usable.
func (d *deviceScrape) read(what string, ret nvml.Return) bool {
	ok, err := nvmlErr(fmt.Sprintf("gpu %s %s", d.idx, what), ret)
	if err != nil {
		d.errs = append(d.errs, err)
	}
	return ok
}

// identity is the info series: name, PCI bus, driver and CUDA.
func (d *deviceScrape) identity(driver, cuda string) {
	name, ret := d.dev.GetName()
	d.read("name", ret)
	pci, ret := d.dev.GetPciInfo()
	busID := ""
	if d.read("pci info", ret) {
		busID = pciBusID(pci)
	}
	d.gauge(gpuInfoDesc, 1, name, busID, driver, cuda)
}

// load is what the GPU does and draws: utilization, memory, power, energy
// and temperature.
func (d *deviceScrape) load() {
	dev := d.dev
	if u, ret := dev.GetUtilizationRates(); d.read("utilization", ret) {
		d.gauge(gpuUtilDesc, float64(u.Gpu)/100)
		d.gauge(gpuMemUtilDesc, float64(u.Memory)/100)
	}
	if m, ret := dev.GetMemoryInfo_v2(); ret == nvml.SUCCESS {
		d.gauge(gpuMemUsedDesc, float64(m.Used))
		d.gauge(gpuMemTotalDesc, float64(m.Total))
		d.gauge(gpuMemReservedDesc, float64(m.Reserved))
	} else if m, ret := dev.GetMemoryInfo(); d.read("memory", ret) {
		// Older drivers: no reserved figure.
		d.gauge(gpuMemUsedDesc, float64(m.Used))
		d.gauge(gpuMemTotalDesc, float64(m.Total))
	}
	if mw, ret := dev.GetPowerUsage(); d.read("power", ret) {
		d.gauge(gpuPowerDesc, float64(mw)/1000)
	}
	if mw, ret := dev.GetEnforcedPowerLimit(); d.read("power limit", ret) {
		d.gauge(gpuPowerLimitDesc, float64(mw)/1000)
	}
	if mj, ret := dev.GetTotalEnergyConsumption(); d.read("energy", ret) {
		d.counter(gpuEnergyDesc, float64(mj)/1000)
	}
	if t, ret := dev.GetTemperature(nvml.TEMPERATURE_GPU); d.read("temperature", ret) {
		d.gauge(gpuTempDesc, float64(t), "gpu")
	}
}

// clocks are the clocks and why they are held back.
func (d *deviceScrape) clocks() {
	for _, c := range []struct {
		name string
		typ  nvml.ClockType
	}{{"sm", nvml.CLOCK_SM}, {"memory", nvml.CLOCK_MEM}, {"graphics", nvml.CLOCK_GRAPHICS}} {
		if mhz, ret := d.dev.GetClockInfo(c.typ); d.read("clock "+c.name, ret) {
			d.gauge(gpuClockDesc, float64(mhz)*1e6, c.name)
		}
	}
	if reasons, ret := d.dev.GetCurrentClocksEventReasons(); d.read("clocks event reasons", ret) {
		for _, r := range clocksEventReasons {
			d.gauge(gpuClockReasonDesc, boolValue(reasons&r.bit != 0), r.name)
		}
	}
}

// links are the PCIe traffic and replays, and the memory's ECC errors.
func (d *deviceScrape) links() {
	for _, p := range []struct {
		dir     string
		counter nvml.PcieUtilCounter
	}{{"tx", nvml.PCIE_UTIL_TX_BYTES}, {"rx", nvml.PCIE_UTIL_RX_BYTES}} {
		if kbs, ret := d.dev.GetPcieThroughput(p.counter); d.read("pcie "+p.dir, ret) {
			d.gauge(gpuPCIeDesc, float64(kbs)*1024, p.dir)
		}
	}
	if n, ret := d.dev.GetPcieReplayCounter(); d.read("pcie replay", ret) {
		d.counter(gpuPCIeReplayDesc, float64(n))
	}
	for _, e := range []struct {
		name string
		typ  nvml.MemoryErrorType
	}{{"corrected", nvml.MEMORY_ERROR_TYPE_CORRECTED}, {"uncorrected", nvml.MEMORY_ERROR_TYPE_UNCORRECTED}} {
		if n, ret := d.dev.GetTotalEccErrors(e.typ, nvml.VOLATILE_ECC); d.read("ecc "+e.name, ret) {
			d.counter(gpuECCDesc, float64(n), e.name)
		}
	}
}

// scrapeMIG exports the MIG devices of a GPU in MIG mode.
func (g *Collector) scrapeMIG(d *deviceScrape) error {
	idx, dev := d.idx, d.dev
	current, _, ret := dev.GetMigMode()
	if ok, err := nvmlErr("gpu "+idx+" mig mode", ret); !ok || current != nvml.DEVICE_MIG_ENABLE {
		return err
	}
	n, ret := dev.GetMaxMigDeviceCount()
	if ok, err := nvmlErr("gpu "+idx+" mig count", ret); !ok {
		return err
	}
	for i := range n {
		mig, ret := dev.GetMigDeviceHandleByIndex(i)
		if ret == nvml.ERROR_NOT_FOUND || ret == nvml.ERROR_INVALID_ARGUMENT {
			continue // an empty MIG slot
		}
		if _, err := nvmlErr("gpu "+idx+" mig device", ret); err != nil {
			return err
		}
		migUUID, _ := mig.GetUUID()
		gi, _ := mig.GetGpuInstanceId()
		ci, _ := mig.GetComputeInstanceId()
		d.gauge(gpuMIGDesc, 1, migUUID, strconv.Itoa(gi), strconv.Itoa(ci))
	}
	return nil
}
