package collector

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/llmprobe/llmprobe/prober"
)

const (
	acceptOpenMetrics = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
	acceptProtobuf    = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited"
)

// scrape serves c as the daemon serves /metrics and returns the page asked
// for with accept ("" is the text format).
func scrape(t *testing.T, c prometheus.Collector, accept string) string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true}).ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// tooLong is a request id longer than an exemplar may be.
var tooLong = strings.Repeat("x", 121)

// exemplarProbe is a probe whose requests carried ids: hex ones on canary
// and burst traffic, one that needs escaping, one too long for an
// exemplar, and a TTFT past every bucket.
func exemplarProbe(t *testing.T) *Probe {
	t.Helper()
	p := NewProbe(true)
	p.Configure(testConfig(t, "300ms"))
	weird := successResult("a")
	weird.Model, weird.RequestID = "we\"ird\\mo\ndel ü", "we\"ird\\i\nd ü"
	p.Observe(weird)
	canary := successResult("b")
	canary.RequestID = "0af7651916cd43dd8448eb211c80319c"
	canary.Timings.TTFB = 100 * time.Millisecond
	p.Observe(canary)
	long := successResult("b")
	long.RequestID = tooLong
	p.Observe(long)
	slow := successResult("b")
	slow.Traffic, slow.RequestID, slow.TTFT, slow.E2E = prober.TrafficBurst, "4bf92f3577b34da6a3ce929d0e0e4736", time.Hour, 2*time.Hour
	p.Observe(slow)
	return p
}

// Every observation (of token gaps, a request's longest) carries its
// request's id as the exemplar trace_id: OpenMetrics shows the latest per
// classic bucket (+Inf and a native-only family's +Inf included), escaped;
// the text format has none; an id too long for an exemplar is counted
// without one.
func TestExemplarsInOpenMetrics(t *testing.T) {
	p := exemplarProbe(t)
	page := scrape(t, p, acceptOpenMetrics)
	for _, want := range []string{
		`llmprobe_time_to_first_token_seconds_bucket{model="m",scenario="s",target="b",traffic="canary",le="0.3"} 2 # {trace_id="0af7651916cd43dd8448eb211c80319c"} 0.3 `,
		`llmprobe_time_to_first_token_seconds_bucket{model="m",scenario="s",target="b",traffic="burst",le="+Inf"} 1 # {trace_id="4bf92f3577b34da6a3ce929d0e0e4736"} 3600.0 `,
		// A request's token gaps: its longest carries the exemplar.
		`llmprobe_inter_token_latency_seconds_bucket{model="we\"ird\\mo\ndel ü",scenario="s",target="a",traffic="canary",le="0.04"} 2 # {trace_id="we\"ird\\i\nd ü"} 0.03 `,
		`llmprobe_time_to_first_byte_seconds_bucket{model="m",scenario="s",target="b",traffic="canary",le="+Inf"} 1 # {trace_id="0af7651916cd43dd8448eb211c80319c"} 0.1 `,
		`llmprobe_request_duration_seconds_bucket{model="m",scenario="s",target="b",traffic="burst",le="+Inf"} 1 # {trace_id="4bf92f3577b34da6a3ce929d0e0e4736"} 7200.0 `,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the OpenMetrics page lacks %s", want)
		}
	}
	if strings.Contains(page, tooLong) {
		t.Error("an id too long for an exemplar is on the page")
	}
	if text := scrape(t, p, ""); strings.Contains(text, "trace_id") {
		t.Error("the text format has exemplars")
	}
	if !strings.HasSuffix(page, "# EOF\n") {
		t.Error("the OpenMetrics page does not end with # EOF")
	}
}

// In protobuf, what a Prometheus that ingests native histograms asks for,
// each histogram has its native buckets and exemplars of its own, with
// timestamps, beside its classic buckets' ones.
func TestProtobufHasNativeHistogramsWithExemplars(t *testing.T) {
	body := scrape(t, exemplarProbe(t), acceptProtobuf)
	dec := expfmt.NewDecoder(strings.NewReader(body), expfmt.NewFormat(expfmt.TypeProtoDelim))
	native := map[string]bool{}
	exemplars := map[string]bool{}
	for {
		f := &dto.MetricFamily{}
		if err := dec.Decode(f); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		for _, m := range f.GetMetric() {
			h := m.GetHistogram()
			if h == nil {
				continue
			}
			native[f.GetName()] = native[f.GetName()] || (h.GetSchema() == 3 && len(h.GetPositiveSpan()) > 0)
			for _, e := range h.GetExemplars() {
				if e.GetTimestamp() != nil && len(e.GetLabel()) == 1 && e.GetLabel()[0].GetName() == exemplarLabel {
					exemplars[f.GetName()+" "+e.GetLabel()[0].GetValue()] = true
				}
			}
		}
	}
	for _, name := range []string{"llmprobe_time_to_first_token_seconds", "llmprobe_time_to_first_byte_seconds", "llmprobe_inter_token_latency_seconds", "llmprobe_request_duration_seconds"} {
		if !native[name] {
			t.Errorf("%s has no native histogram at schema 3 (factor 1.1)", name)
		}
	}
	for _, want := range []string{"llmprobe_time_to_first_token_seconds 4bf92f3577b34da6a3ce929d0e0e4736", "llmprobe_time_to_first_byte_seconds 0af7651916cd43dd8448eb211c80319c"} {
		if !exemplars[want] {
			t.Errorf("no native exemplar %s; have %v", want, exemplars)
		}
	}
}

// Without classic buckets every histogram is native only: the text formats
// have its +Inf bucket, _sum and _count.
func TestNativeHistogramsOnly(t *testing.T) {
	p := NewProbe(false)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(p)
	p.Configure(testConfig(t, "300ms"))
	r := successResult("a")
	r.Timings.TTFB, r.DispatchDelay = time.Millisecond, time.Millisecond
	p.Observe(r)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			if h := m.GetHistogram(); h != nil {
				n++
				if len(h.GetBucket()) != 0 || len(h.GetPositiveSpan()) == 0 {
					t.Errorf("%s: %d classic buckets, native spans %v; want none and a native histogram", f.GetName(), len(h.GetBucket()), h.GetPositiveSpan())
				}
			}
		}
	}
	if n != 6 {
		t.Errorf("%d histograms, want 6 (TTFT, TTFB, ITL, TPOT, E2E, dispatch)", n)
	}
	if page := scrape(t, p, ""); !strings.Contains(page, `llmprobe_time_to_first_token_seconds_bucket{model="m",scenario="s",target="a",traffic="canary",le="+Inf"} 1`) ||
		strings.Count(page, "_bucket{") != n {
		t.Errorf("the text page of native histograms has other buckets than +Inf:\n%s", page)
	}
}

// The TTFT components are gauges of the series' last successful request
// that had a split: a later split replaces it whole, a request without one
// leaves it, and the gauges add up to that request's TTFT.
func TestComponentGauges(t *testing.T) {
	p := NewProbe(true)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(p)
	p.Configure(testConfig(t, "300ms"))
	const name = "llmprobe_probe_ttft_component_seconds"
	r := successResult("a")
	r.TTFTParts = []prober.TTFTPart{{Component: prober.ComponentDispatch, D: time.Millisecond}, {Component: prober.ComponentConnect, D: 9 * time.Millisecond},
		{Component: prober.ComponentEngineQueue, D: 90 * time.Millisecond}, {Component: prober.ComponentEnginePrefill, D: 150 * time.Millisecond}, {Component: prober.ComponentNetwork, D: 50 * time.Millisecond}}
	p.Observe(r)
	later := successResult("a")
	later.TTFT = 200 * time.Millisecond
	later.TTFTParts = []prober.TTFTPart{{Component: prober.ComponentDispatch, D: 2 * time.Millisecond}, {Component: prober.ComponentConnect, D: 8 * time.Millisecond},
		{Component: prober.ComponentServerOther, D: 190 * time.Millisecond}, {Component: "made_up", D: time.Second}}
	p.Observe(later)
	p.Observe(successResult("a")) // no split
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "component" {
					got[lp.GetValue()] = m.GetGauge().GetValue()
				}
			}
		}
	}
	want := map[string]float64{"dispatch": 0.002, "connect": 0.008, "server_other": 0.19}
	sum := 0.0
	for c, v := range got {
		sum += v
		if want[c] != v {
			t.Errorf("%s{component=%q} = %g, want %g", name, c, v, want[c])
		}
	}
	if len(got) != len(want) || sum < 0.2-1e-9 || sum > 0.2+1e-9 {
		t.Errorf("components %v add up to %g, want %v adding up to the last split request's TTFT 0.2", got, sum, want)
	}
}

// Results, reloads and scrapes at once (for -race): every page parses.
func TestProbeUnderLoad(t *testing.T) {
	p := NewProbe(true)
	p.Configure(testConfig(t, "300ms"))
	var wg sync.WaitGroup
	for _, target := range []string{"a", "b"} {
		wg.Go(func() {
			for i := range 300 {
				r := successResult(target)
				r.Traffic = []string{prober.TrafficCanary, prober.TrafficBurst}[i%2]
				r.RequestID = "0af7651916cd43dd8448eb211c80319c"
				p.Observe(r)
			}
		})
	}
	wg.Go(func() {
		for _, ttft := range []string{"200ms", "250ms", "300ms"} {
			p.Configure(testConfig(t, ttft))
		}
	})
	for range 20 {
		page := scrape(t, p, "")
		parser := expfmt.NewTextParser(model.UTF8Validation)
		if _, err := parser.TextToMetricFamilies(bytes.NewReader([]byte(page))); err != nil {
			t.Fatalf("page does not parse: %v", err)
		}
	}
	wg.Wait()
}
