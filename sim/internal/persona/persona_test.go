package persona

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// value is the one series of family name: a counter's or gauge's value, a
// histogram's sample count.
func value(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		m := mf.GetMetric()[0]
		switch mf.GetType() {
		case dto.MetricType_HISTOGRAM:
			return float64(m.GetHistogram().GetSampleCount())
		case dto.MetricType_COUNTER:
			return m.GetCounter().GetValue()
		}
		return m.GetGauge().GetValue()
	}
	t.Fatalf("no family %s", name)
	return 0
}

// A request of 10 prompt and 3 output tokens, admitted 40 ms after it
// arrived, its first token 100 ms after admission, the next ones 10 ms
// apart, lands in each family's own metrics; gauges read the load.
func TestMetricsPerFamily(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	cases := []struct {
		family string
		want   map[string]float64
	}{
		{VLLM, map[string]float64{"vllm:time_to_first_token_seconds": 1, "vllm:inter_token_latency_seconds": 2, "vllm:request_queue_time_seconds": 1,
			"vllm:generation_tokens_total": 3, "vllm:num_requests_running": 3, "vllm:kv_cache_usage_perc": 0.75}},
		{SGLang, map[string]float64{"sglang:time_to_first_token_seconds": 1, "sglang:num_requests_total": 1, "sglang:num_queue_reqs": 5, "sglang:token_usage": 0.75}},
		{TGI, map[string]float64{"tgi_request_mean_time_per_token_duration": 1, "tgi_request_success": 1, "tgi_queue_size": 5}},
		{LlamaCPP, map[string]float64{"llamacpp:tokens_predicted_total": 3, "llamacpp:prompt_tokens_total": 10, "llamacpp:prompt_seconds_total": 0.1, "llamacpp:requests_deferred": 5}},
		{"", map[string]float64{"vllm:time_to_first_token_seconds": 1}}, // the sim itself
	}
	for _, c := range cases {
		t.Run(c.family, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			m := NewMetrics(reg, c.family, "m", 4, func() Load { return Load{Running: 3, Waiting: 5} }, Features{})
			r := Request{PromptTokens: 10, Arrived: t0, Admitted: ms(40)}
			m.Admitted(r, 0)
			for i, at := range []time.Time{ms(140), ms(150), ms(160)} {
				m.Token(r, at)
				if i == 0 {
					r.First = at
				}
				r.Generated, r.Last = i+1, at
			}
			m.Finished(r, r.Last)
			for name, want := range c.want {
				if got := value(t, reg, name); got < want-1e-9 || got > want+1e-9 {
					t.Errorf("%s = %g, want %g", name, got, want)
				}
			}
		})
	}
}

// llama.cpp sends its timings always, vLLM only when started with
// per-request metrics and asked; both count from the request's course.
func TestTimings(t *testing.T) {
	for _, c := range []struct {
		family         string
		perReq, wanted bool
		want           TimingsKind
	}{
		{LlamaCPP, false, false, TimingsLlamaCPP}, {VLLM, true, true, TimingsVLLM}, {VLLM, true, false, TimingsNone}, {VLLM, false, true, TimingsNone}, {"", true, true, TimingsVLLM},
	} {
		if got := TimingsFor(c.family, c.perReq, c.wanted); got != c.want {
			t.Errorf("TimingsFor(%q, %v, %v) = %v, want %v", c.family, c.perReq, c.wanted, got, c.want)
		}
	}
	t0 := time.Unix(1000, 0)
	r := Request{PromptTokens: 10, Generated: 3, Arrived: t0, Admitted: t0.Add(40 * time.Millisecond), First: t0.Add(140 * time.Millisecond), Last: t0.Add(160 * time.Millisecond)}
	if v := RequestMetricsOf(r); v.QueueTimeMs != 40 || v.TimeToFirstTokenMs != 100 || v.GenerationTimeMs != 20 {
		t.Errorf("vLLM metrics %+v", v)
	}
	if l := LlamaTimingsOf(r); l.PromptN != 10 || l.PromptMs != 100 || l.PredictedN != 3 || l.PredictedMs != 20 {
		t.Errorf("llama.cpp timings %+v", l)
	}
}
