//go:build linux && cgo

package gpu

import (
	"bytes"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/llmprobe/llmprobe/internal/testkit"
)

const gib = 1 << 30

// h100 is go-nvml's 8-GPU DGX H100 mock with known readings on every device:
// the mock server only answers identity and memory, so the test sets the rest.
type h100 struct {
	*server.Server
	events chan nvml.EventData
	energy func(i int) uint64
}

func newH100(t testing.TB) *h100 {
	t.Helper()
	h := &h100{Server: dgxh100.New(), events: make(chan nvml.EventData, 16)}
	h.energy = func(i int) uint64 { return 123456789 + uint64(i) }
	for i, d := range h.Devices {
		dev := d.(*server.Device)
		dev.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{Gpu: 75, Memory: 40}, nvml.SUCCESS }
		dev.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) {
			return nvml.Memory_v2{Total: 80 * gib, Used: uint64(i+1) * gib, Reserved: 512 << 20, Free: 80*gib - uint64(i+1)*gib}, nvml.SUCCESS
		}
		dev.GetPowerUsageFunc = func() (uint32, nvml.Return) { return uint32(300000 + i*1000), nvml.SUCCESS }
		dev.GetEnforcedPowerLimitFunc = func() (uint32, nvml.Return) { return 700000, nvml.SUCCESS }
		dev.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { return h.energy(i), nvml.SUCCESS }
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
				case ev := <-h.events:
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

func (h *h100) device(i int) *server.Device { return h.Devices[i].(*server.Device) }

func startGPU(t testing.TB, lib nvml.Interface, logger log.Logger, timeout time.Duration) *Collector {
	t.Helper()
	if logger == nil {
		logger = log.NewNopLogger()
	}
	g := newCollector(lib, logger, timeout)
	g.Start()
	t.Cleanup(g.Stop)
	return g
}

// value is the first series of name from g whose labels include labels.
func value(t *testing.T, g prometheus.Collector, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(g)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(fams, func(f *dto.MetricFamily) bool { return f.GetName() == name })
	if i < 0 {
		return 0, false
	}
	for _, m := range fams[i].GetMetric() {
		match := true
		for k, v := range labels {
			match = match && slices.ContainsFunc(m.GetLabel(), func(lp *dto.LabelPair) bool { return lp.GetName() == k && lp.GetValue() == v })
		}
		if !match {
			continue
		}
		if m.Gauge != nil {
			return m.GetGauge().GetValue(), true
		}
		return m.GetCounter().GetValue(), true
	}
	return 0, false
}

// Every metric's value and unit: mW to W, mJ to J, MHz to Hz, KB/s to B/s, percent to ratio.
func TestGPUMetricsFromH100Mock(t *testing.T) {
	g := startGPU(t, newH100(t), nil, 2*time.Second)
	gpu0 := func(extra ...string) map[string]string {
		l := map[string]string{"gpu": "0"}
		for i := 0; i+1 < len(extra); i += 2 {
			l[extra[i]] = extra[i+1]
		}
		return l
	}
	cases := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"llmprobe_collector_success", map[string]string{"collector": "gpu"}, 1},
		{"llmprobe_gpu_info", gpu0("name", "NVIDIA H100 80GB HBM3", "driver_version", "550.54.15", "cuda_version", "12.4"), 1},
		{"llmprobe_gpu_utilization_ratio", gpu0(), 0.75},
		{"llmprobe_gpu_memory_utilization_ratio", gpu0(), 0.40},
		{"llmprobe_gpu_memory_total_bytes", gpu0(), 80 * gib},
		{"llmprobe_gpu_memory_used_bytes", gpu0(), 1 * gib},
		{"llmprobe_gpu_memory_reserved_bytes", gpu0(), 512 << 20},
		{"llmprobe_gpu_power_watts", map[string]string{"gpu": "3"}, 303},
		{"llmprobe_gpu_power_limit_watts", gpu0(), 700},
		{"llmprobe_gpu_energy_joules_total", gpu0(), 123456.789},
		{"llmprobe_gpu_temperature_celsius", map[string]string{"gpu": "2", "sensor": "gpu"}, 42},
		{"llmprobe_gpu_clock_hz", gpu0("clock", "sm"), 1.98e9},
		{"llmprobe_gpu_clock_hz", gpu0("clock", "memory"), 2.619e9},
		{"llmprobe_gpu_clocks_event_reason_active", gpu0("reason", "sw_power_cap"), 1},
		{"llmprobe_gpu_clocks_event_reason_active", gpu0("reason", "hw_thermal_slowdown"), 1},
		{"llmprobe_gpu_clocks_event_reason_active", gpu0("reason", "sw_thermal_slowdown"), 0},
		{"llmprobe_gpu_pcie_throughput_bytes_per_second", gpu0("direction", "tx"), 1024000},
		{"llmprobe_gpu_pcie_replay_errors_total", gpu0(), 3},
		{"llmprobe_gpu_ecc_errors_total", gpu0("type", "uncorrected"), 5},
	}
	for _, tc := range cases {
		got, ok := value(t, g, tc.name, tc.labels)
		if !ok || got != tc.want {
			t.Errorf("%s%v = %v (present %v), want %v", tc.name, tc.labels, got, ok, tc.want)
		}
	}
	if n := testutil.CollectAndCount(g, "llmprobe_gpu_info"); n != 8 {
		t.Errorf("gpu_info series = %d, want 8", n)
	}
	// Eight GPUs' series, as a scrape shows them, are lint-clean.
	reg := prometheus.NewRegistry()
	reg.MustRegister(g)
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	testkit.PromtoolCheckMetrics(t, rec.Body.String())
	if got, _ := value(t, g, "llmprobe_gpu_info", gpu0()); got != 1 {
		t.Error("no info for gpu 0")
	}
	// NOT_SUPPORTED is absence, not an error.
	if _, ok := value(t, g, "llmprobe_gpu_ecc_errors_total", map[string]string{"gpu": "1", "type": "uncorrected"}); ok {
		t.Error("an unsupported field was exported")
	}
}

func TestGPUErrorMidScrapeIsCollectorFailure(t *testing.T) {
	h := newH100(t)
	h.device(3).GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
	h.device(2).GetPowerUsageFunc = func() (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	g := startGPU(t, h, nil, 2*time.Second)
	if v, _ := value(t, g, "llmprobe_collector_success", map[string]string{"collector": "gpu"}); v != 0 {
		t.Errorf("collector_success = %v after an NVML error, want 0", v)
	}
	if _, ok := value(t, g, "llmprobe_gpu_power_watts", map[string]string{"gpu": "2"}); ok {
		t.Error("NOT_SUPPORTED power exported")
	}
	// The rest of the scrape still arrives.
	if v, ok := value(t, g, "llmprobe_gpu_temperature_celsius", map[string]string{"gpu": "4"}); !ok || v != 44 {
		t.Errorf("gpu 4 temperature = %v (present %v)", v, ok)
	}
}

type countingLogger struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *countingLogger) Log(kv ...any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return log.NewLogfmtLogger(&c.buf).Log(kv...)
}

func TestGPULibraryMissing(t *testing.T) {
	lib := &mock.Interface{InitFunc: func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }}
	logger := &countingLogger{}
	g := startGPU(t, lib, logger, time.Second)
	for range 3 {
		if v, _ := value(t, g, "llmprobe_collector_success", map[string]string{"collector": "gpu"}); v != 0 {
			t.Errorf("collector_success = %v without NVML", v)
		}
	}
	if n := testutil.CollectAndCount(g, "llmprobe_gpu_info"); n != 0 {
		t.Errorf("%d gpu_info series without NVML", n)
	}
	logger.mu.Lock()
	defer logger.mu.Unlock()
	if n := strings.Count(logger.buf.String(), "GPU metrics unavailable"); n != 1 {
		t.Errorf("logged the missing library %d times, want once:\n%s", n, logger.buf.String())
	}
}

func TestGPUMIGDevices(t *testing.T) {
	h := newH100(t)
	dev := h.device(4)
	dev.GetMigModeFunc = func() (int, int, nvml.Return) { return nvml.DEVICE_MIG_ENABLE, nvml.DEVICE_MIG_ENABLE, nvml.SUCCESS }
	dev.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return 7, nvml.SUCCESS }
	migs := []nvml.Device{
		&mock.Device{GetUUIDFunc: func() (string, nvml.Return) { return "MIG-aaaa", nvml.SUCCESS }, GetGpuInstanceIdFunc: func() (int, nvml.Return) { return 1, nvml.SUCCESS }, GetComputeInstanceIdFunc: func() (int, nvml.Return) { return 0, nvml.SUCCESS }},
		&mock.Device{GetUUIDFunc: func() (string, nvml.Return) { return "MIG-bbbb", nvml.SUCCESS }, GetGpuInstanceIdFunc: func() (int, nvml.Return) { return 2, nvml.SUCCESS }, GetComputeInstanceIdFunc: func() (int, nvml.Return) { return 0, nvml.SUCCESS }},
	}
	dev.GetMigDeviceHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		if i < len(migs) {
			return migs[i], nvml.SUCCESS
		}
		return nil, nvml.ERROR_NOT_FOUND
	}
	g := startGPU(t, h, nil, 2*time.Second)
	if n := testutil.CollectAndCount(g, "llmprobe_gpu_mig_info"); n != 2 {
		t.Errorf("mig_info series = %d, want 2", n)
	}
	if v, ok := value(t, g, "llmprobe_gpu_mig_info", map[string]string{"gpu": "4", "mig_uuid": "MIG-bbbb", "gpu_instance_id": "2"}); !ok || v != 1 {
		t.Error("MIG-bbbb missing")
	}
	if v, _ := value(t, g, "llmprobe_collector_success", map[string]string{"collector": "gpu"}); v != 1 {
		t.Error("MIG scrape failed")
	}
}

// Each XID event is counted once, by its own listener goroutine.
func TestGPUXIDEvents(t *testing.T) {
	h := newH100(t)
	g := startGPU(t, h, nil, 2*time.Second)
	h.events <- nvml.EventData{Device: h.Devices[0], EventType: nvml.EventTypeXidCriticalError, EventData: 79}
	h.events <- nvml.EventData{Device: h.Devices[0], EventType: nvml.EventTypeXidCriticalError, EventData: 79}
	h.events <- nvml.EventData{Device: h.Devices[1], EventType: nvml.EventTypeXidCriticalError, EventData: 48}
	uuid0, _ := h.Devices[0].GetUUID()
	deadline := time.Now().Add(5 * time.Second)
	for {
		v, _ := value(t, g, "llmprobe_gpu_xid_errors_total", map[string]string{"gpu": "1", "xid": "48"})
		if v == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if v, _ := value(t, g, "llmprobe_gpu_xid_errors_total", map[string]string{"gpu": "0", "uuid": uuid0, "xid": "79"}); v != 2 {
		t.Errorf("gpu 0 xid 79 = %v, want 2", v)
	}
	if v, _ := value(t, g, "llmprobe_gpu_xid_errors_total", map[string]string{"gpu": "1", "xid": "48"}); v != 1 {
		t.Errorf("gpu 1 xid 48 = %v, want 1", v)
	}
	if v, ok := value(t, g, "llmprobe_gpu_xid_last_seen_timestamp_seconds", map[string]string{"gpu": "0"}); !ok || v < float64(time.Now().Add(-time.Minute).Unix()) {
		t.Errorf("last seen = %v (present %v)", v, ok)
	}
}

// A hung NVML call costs its scrape the GPU metrics, within the bound, and
// no second call piles up behind it.
func TestGPUHungCallIsBounded(t *testing.T) {
	h := newH100(t)
	release := make(chan struct{})
	var calls sync.WaitGroup
	calls.Add(1)
	h.device(5).GetPowerUsageFunc = func() (uint32, nvml.Return) {
		defer calls.Done()
		<-release
		return 1, nvml.SUCCESS
	}
	g := startGPU(t, h, nil, 200*time.Millisecond)
	start := time.Now()
	if v, _ := value(t, g, "llmprobe_collector_success", map[string]string{"collector": "gpu"}); v != 0 {
		t.Error("a hung scrape reported success")
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the scrape waited %s on a hung call; the bound is 200ms", took)
	}
	// While the call hangs, scrapes fail at once instead of queueing.
	if v, _ := value(t, g, "llmprobe_collector_success", map[string]string{"collector": "gpu"}); v != 0 {
		t.Error("a second scrape ran behind the hung one")
	}
	close(release)
	calls.Wait()
	h.device(5).GetPowerUsageFunc = func() (uint32, nvml.Return) { return 305000, nvml.SUCCESS }
	deadline := time.Now().Add(5 * time.Second)
	for {
		if v, _ := value(t, g, "llmprobe_collector_success", map[string]string{"collector": "gpu"}); v == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the collector did not recover after the call returned")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestGPUBurstFacts(t *testing.T) {
	h := newH100(t)
	var mu sync.Mutex
	extra := uint64(0)
	h.energy = func(int) uint64 { mu.Lock(); defer mu.Unlock(); return 1_000_000 + extra }
	g := startGPU(t, h, nil, time.Second)
	end := g.BeginBurst()
	mu.Lock()
	extra = 125_000 // 125 J per GPU, 1000 J over 8
	mu.Unlock()
	facts := end(500)
	if facts == nil || facts.Count != 8 || facts.Names[0] != "NVIDIA H100 80GB HBM3" || facts.DriverVersion != "550.54.15" || facts.CUDAVersion != "12.4" {
		t.Fatalf("facts = %+v", facts)
	}
	if facts.EnergyJoules == nil || *facts.EnergyJoules != 1000 || *facts.JoulesPerOutputToken != 2 {
		t.Errorf("energy %v J, per token %v", facts.EnergyJoules, facts.JoulesPerOutputToken)
	}
	if facts.MaxTemperatureCelsius == nil || *facts.MaxTemperatureCelsius != 47 {
		t.Errorf("max temperature %v, want 47 (gpu 7)", facts.MaxTemperatureCelsius)
	}
}

// BenchmarkGPUScrape is one scrape of the 8-GPU mock (target <= 10 ms).
func BenchmarkGPUScrape(b *testing.B) {
	g := startGPU(b, newH100(b), nil, 2*time.Second)
	reg := prometheus.NewRegistry()
	reg.MustRegister(g)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := reg.Gather(); err != nil {
			b.Fatal(err)
		}
	}
}

// The GPU series hold to the metric contract of docs/metrics.md: type and
// label names, as NVML's H100 mock produces them.
func TestGPUMetricContract(t *testing.T) {
	contract, err := testkit.ReadMetricDoc("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]testkit.DocumentedMetric{}
	for _, m := range contract {
		documented[m.Name] = m
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(startGPU(t, newH100(t), nil, 2*time.Second))
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(fams) < 15 {
		t.Fatalf("only %d metric families from the mock", len(fams))
	}
	for _, f := range fams {
		want, ok := documented[f.GetName()]
		if !ok {
			t.Errorf("%s is not in docs/metrics.md", f.GetName())
			continue
		}
		labels := map[string]bool{}
		for _, m := range f.GetMetric() {
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = true
			}
		}
		got := slices.Sorted(maps.Keys(labels))
		if typ := strings.ToLower(f.GetType().String()); typ != want.Type || !slices.Equal(got, want.Labels) {
			t.Errorf("%s: %s with labels %v; docs/metrics.md says %s with %v", f.GetName(), typ, got, want.Type, want.Labels)
		}
	}
}
