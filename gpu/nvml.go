//go:build linux && cgo

package gpu

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmprobe/llmprobe/report"
)

// Collector exports the node's GPUs through NVML. NVML that cannot be loaded (no
// driver, no GPU, a container without the library) is logged once and
// reported as llmprobe_collector_success{collector="gpu"} 0 on every scrape.
type Collector struct {
	lib     nvml.Interface
	logger  log.Logger
	timeout time.Duration

	mu       sync.Mutex
	ready    bool
	initErr  error
	inFlight bool // a scrape still waiting on NVML: don't start another
	xid      map[string]map[string]uint64
	xidLast  map[string]time.Time
	gpuIndex map[string]string // uuid -> index label
	cancel   context.CancelFunc
	done     chan struct{}
}

// New uses the system's NVML library.
func New(logger log.Logger, timeout time.Duration) *Collector {
	return newCollector(nvml.New(), logger, timeout)
}

func newCollector(lib nvml.Interface, logger log.Logger, timeout time.Duration) *Collector {
	return &Collector{lib: lib, logger: logger, timeout: timeout, xid: map[string]map[string]uint64{}, xidLast: map[string]time.Time{}, gpuIndex: map[string]string{}}
}

// Start initialises NVML and starts the XID listener. Failure is not an
// error to the caller: the collector reports it.
func (g *Collector) Start() {
	ret := g.lib.Init()
	g.mu.Lock()
	defer g.mu.Unlock()
	if ret != nvml.SUCCESS {
		g.initErr = fmt.Errorf("NVML init: %s", nvml.ErrorString(ret))
		if ret == nvml.ERROR_LIBRARY_NOT_FOUND {
			g.initErr = errors.New("NVML library not found (no NVIDIA driver, no GPU, or a container without libnvidia-ml.so.1)")
		}
		level.Info(g.logger).Log("msg", "GPU metrics unavailable", "reason", g.initErr)
		return
	}
	g.ready = true
	ctx, cancel := context.WithCancel(context.Background())
	g.cancel, g.done = cancel, make(chan struct{})
	go g.listenXID(ctx)
}

// Stop ends the XID listener and shuts NVML down.
func (g *Collector) Stop() {
	g.mu.Lock()
	ready, cancel, done := g.ready, g.cancel, g.done
	g.mu.Unlock()
	if !ready {
		return
	}
	cancel()
	<-done
	g.lib.Shutdown()
}

// Describe implements prometheus.Collector.
func (g *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- collectorSuccessDesc
	ch <- collectorDurationDesc
	for _, d := range gpuDescs {
		ch <- d
	}
}

// Collect reads every GPU, waiting at most the timeout: a hung NVML call
// costs one scrape its GPU metrics, never the whole scrape.
func (g *Collector) Collect(ch chan<- prometheus.Metric) {
	start := time.Now()
	ok := g.collectBounded(ch)
	ch <- prometheus.MustNewConstMetric(collectorDurationDesc, prometheus.GaugeValue, time.Since(start).Seconds(), "gpu")
	ch <- prometheus.MustNewConstMetric(collectorSuccessDesc, prometheus.GaugeValue, boolValue(ok), "gpu")
}

func (g *Collector) collectBounded(ch chan<- prometheus.Metric) bool {
	g.mu.Lock()
	if !g.ready {
		g.mu.Unlock()
		return false
	}
	if g.inFlight {
		g.mu.Unlock()
		level.Warn(g.logger).Log("msg", "GPU scrape skipped: an earlier NVML call has not returned")
		return false
	}
	g.inFlight = true
	g.mu.Unlock()

	type result struct {
		metrics []prometheus.Metric
		err     error
	}
	done := make(chan result, 1)
	go func() {
		var out []prometheus.Metric
		err := g.scrape(func(m prometheus.Metric) { out = append(out, m) })
		g.mu.Lock()
		g.inFlight = false
		g.mu.Unlock()
		done <- result{out, err}
	}()
	timer := time.NewTimer(g.timeout)
	defer timer.Stop()
	select {
	case r := <-done:
		for _, m := range r.metrics {
			ch <- m
		}
		if r.err != nil {
			level.Debug(g.logger).Log("msg", "GPU scrape", "err", r.err)
		}
		return r.err == nil
	case <-timer.C:
		level.Warn(g.logger).Log("msg", "GPU scrape timed out", "timeout", g.timeout)
		return false
	}
}

// nvmlErr turns an NVML return into an error; NOT_SUPPORTED is no error:
// that field is simply absent.
func nvmlErr(what string, ret nvml.Return) (supported bool, err error) {
	switch ret {
	case nvml.SUCCESS:
		return true, nil
	case nvml.ERROR_NOT_SUPPORTED, nvml.ERROR_FUNCTION_NOT_FOUND:
		return false, nil
	}
	return false, fmt.Errorf("%s: %s", what, nvml.ErrorString(ret))
}

var clocksEventReasons = []struct {
	name string
	bit  uint64
}{
	{"gpu_idle", nvml.ClocksEventReasonGpuIdle},
	{"applications_clocks_setting", nvml.ClocksEventReasonApplicationsClocksSetting},
	{"sw_power_cap", nvml.ClocksEventReasonSwPowerCap},
	{"hw_slowdown", nvml.ClocksThrottleReasonHwSlowdown},
	{"sync_boost", nvml.ClocksEventReasonSyncBoost},
	{"sw_thermal_slowdown", nvml.ClocksEventReasonSwThermalSlowdown},
	{"hw_thermal_slowdown", nvml.ClocksThrottleReasonHwThermalSlowdown},
	{"hw_power_brake_slowdown", nvml.ClocksThrottleReasonHwPowerBrakeSlowdown},
	{"display_clock_setting", nvml.ClocksEventReasonDisplayClockSetting},
}

// scrape reads every device; it carries on past a failing field and returns
// the errors joined.
func (g *Collector) scrape(emit func(prometheus.Metric)) error {
	var errs []error
	fail := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	driver, ret := g.lib.SystemGetDriverVersion()
	if _, err := nvmlErr("driver version", ret); err != nil {
		fail(err)
	}
	cuda := ""
	if v, ret := g.lib.SystemGetCudaDriverVersion(); ret == nvml.SUCCESS {
		cuda = fmt.Sprintf("%d.%d", v/1000, (v%1000)/10)
	}
	count, ret := g.lib.DeviceGetCount()
	if _, err := nvmlErr("device count", ret); err != nil {
		return err
	}
	for i := range count {
		dev, ret := g.lib.DeviceGetHandleByIndex(i)
		if _, err := nvmlErr(fmt.Sprintf("device %d", i), ret); err != nil {
			fail(err)
			continue
		}
		fail(g.scrapeDevice(emit, strconv.Itoa(i), dev, driver, cuda))
	}
	g.mu.Lock()
	for uuid, codes := range g.xid {
		idx := g.gpuIndex[uuid]
		for code, n := range codes {
			emit(prometheus.MustNewConstMetric(gpuXIDDesc, prometheus.CounterValue, float64(n), idx, uuid, code))
		}
		emit(prometheus.MustNewConstMetric(gpuXIDLastSeenDesc, prometheus.GaugeValue, float64(g.xidLast[uuid].UnixNano())/1e9, idx, uuid))
	}
	g.mu.Unlock()
	return errors.Join(errs...)
}

func pciBusID(p nvml.PciInfo) string {
	b := make([]byte, 0, len(p.BusIdLegacy))
	for _, c := range p.BusId {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}

// listenXID counts XID critical errors from an NVML event set, in its own
// goroutine, so scrapes never wait on events.
func (g *Collector) listenXID(ctx context.Context) {
	defer close(g.done)
	set, ret := g.lib.EventSetCreate()
	if ret != nvml.SUCCESS {
		level.Info(g.logger).Log("msg", "XID events unavailable", "err", nvml.ErrorString(ret))
		return
	}
	defer set.Free()
	count, ret := g.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return
	}
	for i := range count {
		dev, ret := g.lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			continue
		}
		if ret := dev.RegisterEvents(nvml.EventTypeXidCriticalError, set); ret != nvml.SUCCESS && ret != nvml.ERROR_NOT_SUPPORTED {
			level.Info(g.logger).Log("msg", "XID events unavailable for a GPU", "gpu", i, "err", nvml.ErrorString(ret))
		}
	}
	for ctx.Err() == nil {
		ev, ret := set.Wait(500)
		switch ret {
		case nvml.SUCCESS:
		case nvml.ERROR_TIMEOUT:
			continue
		default:
			level.Warn(g.logger).Log("msg", "XID event wait failed; listener stops", "err", nvml.ErrorString(ret))
			return
		}
		if ev.EventType != nvml.EventTypeXidCriticalError || ev.Device == nil {
			continue
		}
		uuid, ret := ev.Device.GetUUID()
		if ret != nvml.SUCCESS {
			continue
		}
		code := strconv.FormatUint(ev.EventData, 10)
		g.mu.Lock()
		codes := g.xid[uuid]
		if codes == nil {
			codes = map[string]uint64{}
			g.xid[uuid] = codes
		}
		if _, seen := codes[code]; !seen && len(codes) >= maxXIDCodesPerGPU {
			code = "other"
		}
		codes[code]++
		g.xidLast[uuid] = time.Now()
		g.mu.Unlock()
		level.Warn(g.logger).Log("msg", "XID error", "uuid", uuid, "xid", code)
	}
}

// BeginBurst reads the GPUs' energy counters and samples power and
// temperature until the returned function is called with the burst's output
// tokens; that function returns the burst's GPU facts, or nil without NVML.
func (g *Collector) BeginBurst() func(outputTokens int) *report.GPUFacts {
	g.mu.Lock()
	ready := g.ready
	g.mu.Unlock()
	if !ready {
		return func(int) *report.GPUFacts { return nil }
	}
	facts := &report.GPUFacts{}
	devs := g.devices()
	facts.Count = len(devs)
	facts.DriverVersion, _ = g.lib.SystemGetDriverVersion()
	if v, ret := g.lib.SystemGetCudaDriverVersion(); ret == nvml.SUCCESS {
		facts.CUDAVersion = fmt.Sprintf("%d.%d", v/1000, (v%1000)/10)
	}
	for _, d := range devs {
		name, _ := d.GetName()
		facts.Names = append(facts.Names, name)
	}
	energy := func() (float64, bool) {
		total := 0.0
		for _, d := range devs {
			mj, ret := d.GetTotalEnergyConsumption()
			if ret != nvml.SUCCESS {
				return 0, false
			}
			total += float64(mj) / 1000
		}
		return total, len(devs) > 0
	}
	startEnergy, energyOK := energy()
	start := time.Now()
	stop := make(chan struct{})
	sampled := make(chan float64, 1)
	go func() {
		maxTemp := -1.0
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			for _, d := range devs {
				if t, ret := d.GetTemperature(nvml.TEMPERATURE_GPU); ret == nvml.SUCCESS {
					maxTemp = max(maxTemp, float64(t))
				}
			}
			select {
			case <-stop:
				sampled <- maxTemp
				return
			case <-tick.C:
			}
		}
	}()
	return func(outputTokens int) *report.GPUFacts {
		close(stop)
		if t := <-sampled; t >= 0 {
			facts.MaxTemperatureCelsius = &t
		}
		if endEnergy, ok := energy(); ok && energyOK {
			used := endEnergy - startEnergy
			facts.EnergyJoules = &used
			if secs := time.Since(start).Seconds(); secs > 0 {
				p := used / secs
				facts.MeanPowerWatts = &p
			}
			if outputTokens > 0 {
				perToken := used / float64(outputTokens)
				facts.JoulesPerOutputToken = &perToken
			}
		}
		return facts
	}
}

func (g *Collector) devices() []nvml.Device {
	count, ret := g.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil
	}
	var out []nvml.Device
	for i := range count {
		if d, ret := g.lib.DeviceGetHandleByIndex(i); ret == nvml.SUCCESS {
			out = append(out, d)
		}
	}
	return out
}
