package enginemetrics

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/config"
)

const vllmModel = "meta-llama/Llama-3.1-8B-Instruct"

// page parses a testdata file as a scrape would.
func page(t *testing.T, file string) *Page {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	return pageOf(t, string(b))
}

func pageOf(t *testing.T, text string) *Page {
	t.Helper()
	fams, err := parse([]byte(text), "text/plain; version=0.0.4")
	if err != nil {
		t.Fatal(err)
	}
	return &Page{families: fams}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// wantFigure checks a histogram figure's count, mean and quantiles exactly.
func wantFigure(t *testing.T, w *Window, metric string, count, mean float64, qs map[string][3]float64) {
	t.Helper()
	f, ok := w.Lookup(metric)
	if !ok {
		t.Fatalf("no figure %s", metric)
	}
	if f.NA != "" || f.Count == nil || f.Mean == nil {
		t.Fatalf("%s: n/a: %s", metric, f.NA)
	}
	if *f.Count != count || !near(*f.Mean, mean) {
		t.Errorf("%s: count %g mean %g, want %g and %g", metric, *f.Count, *f.Mean, count, mean)
	}
	for name, want := range qs {
		q, ok := f.Quantile(name)
		if !ok {
			t.Errorf("%s: no %s", metric, name)
			continue
		}
		upper := math.Inf(1)
		if q.BucketUpper != nil {
			upper = *q.BucketUpper
		}
		if !near(q.Value, want[0]) || !near(q.BucketLower, want[1]) || !(near(upper, want[2]) || upper == want[2]) {
			t.Errorf("%s %s = %g in [%g, %g], want %g in [%g, %g]", metric, name, q.Value, q.BucketLower, upper, want[0], want[1], want[2])
		}
	}
}

func wantNA(t *testing.T, w *Window, metric, reason string) {
	t.Helper()
	f, ok := w.Lookup(metric)
	if !ok {
		t.Fatalf("no figure %s", metric)
	}
	if f.NA == "" || !strings.Contains(f.NA, reason) || f.Mean != nil || len(f.Quantiles) > 0 {
		t.Errorf("%s: na %q mean %v, want n/a containing %q", metric, f.NA, f.Mean, reason)
	}
}

// The delta buckets of TTFT (for vLLM's model only, not the other model on
// the page) are 0.06:2 0.08:4 0.1:8 0.25:9 0.5:10: p50's rank 5 falls in
// (0.08, 0.1] with 4 of the bucket's... 1 of its 4 counts below it, so
// 0.08 + 0.02·1/4 = 0.085; p90's rank 9 ends (0.1, 0.25]; p99's rank 9.9
// lies 0.9 into (0.25, 0.5].
var (
	ttftWant  = map[string][3]float64{"p50": {0.085, 0.08, 0.1}, "p90": {0.25, 0.1, 0.25}, "p99": {0.475, 0.25, 0.5}}
	queueWant = map[string][3]float64{"p50": {0.1875, 0, 0.3}, "p90": {0.4, 0.3, 0.5}, "p99": {0.49, 0.3, 0.5}}
)

func TestVLLMDelta(t *testing.T) {
	w := Compare(page(t, "vllm-before.txt"), page(t, "vllm-after.txt"), Options{Family: "vllm", Model: vllmModel})
	if w.Error != "" || w.Family != "vllm" || w.Model != vllmModel {
		t.Fatalf("window: %+v", w)
	}
	wantFigure(t, w, MetricTTFT, 10, 1.1/10, ttftWant)
	wantFigure(t, w, MetricQueue, 10, 1.0/10, queueWant)
	wantFigure(t, w, MetricPrefill, 10, 0.05, map[string][3]float64{"p50": {0.15, 0, 0.3}})
	wantFigure(t, w, MetricE2E, 10, 1.3, nil)
	wantNA(t, w, MetricTPOT, "the page has no vllm:request_time_per_output_token_seconds")
	if f, _ := w.Lookup(MetricITL); f.Source != "vllm:time_per_output_token_seconds" || f.Count == nil || *f.Count != 10 {
		t.Errorf("itl from the pre-0.11 name: %+v", f)
	}
	gauges := map[string][2]float64{GaugeWaiting: {0, 3}, GaugeRunning: {1, 5}, GaugeKVCache: {0.2, 0.42}}
	for _, g := range w.Gauges {
		want := gauges[g.Metric]
		if g.Before == nil || g.After == nil || *g.Before != want[0] || *g.After != want[1] {
			t.Errorf("gauge %s = %v → %v, want %v", g.Metric, g.Before, g.After, want)
		}
	}
}

// An e2e p50 check spelled out: delta buckets 1.0:6 1.5:10 over request
// buckets 0.3 0.5 0.8 1.0 1.5: rank 5 lies in (0.8, 1.0] with all 6 there.
func TestE2EQuantileByHand(t *testing.T) {
	w := Compare(page(t, "vllm-before.txt"), page(t, "vllm-after.txt"), Options{Family: "vllm", Model: vllmModel})
	f, _ := w.Lookup(MetricE2E)
	q, _ := f.Quantile("p50")
	if !near(q.Value, 0.8+0.2*5.0/6) || q.BucketLower != 0.8 || *q.BucketUpper != 1.0 {
		t.Errorf("e2e p50 = %+v", q)
	}
}

func TestModelFilter(t *testing.T) {
	before, after := page(t, "vllm-before.txt"), page(t, "vllm-after.txt")
	w := Compare(before, after, Options{Family: "vllm", Model: "not-served"})
	wantNA(t, w, MetricTTFT, `for model_name="not-served" (it has "meta-llama/Llama-3.1-8B-Instruct", "other-model")`)
	// No model known: every series counts; the other model's requests added
	// no count, only 100 s of sum, which now weighs in the mean.
	w = Compare(before, after, Options{Family: "vllm"})
	wantFigure(t, w, MetricTTFT, 10, 101.1/10, ttftWant)
}

func TestRestartBetweenScrapes(t *testing.T) {
	for name, pair := range map[string][2]string{
		"process start changed": {"vllm-before.txt", "vllm-restarted.txt"},
		"counters went back":    {"vllm-after.txt", "vllm-before.txt"},
	} {
		t.Run(name, func(t *testing.T) {
			w := Compare(page(t, pair[0]), page(t, pair[1]), Options{Family: "vllm", Model: vllmModel})
			if w.Error != ErrRestarted {
				t.Fatalf("error %q, want %q", w.Error, ErrRestarted)
			}
			for _, m := range Metrics {
				wantNA(t, w, m, ErrRestarted)
			}
			for _, g := range w.Gauges {
				if g.NA != ErrRestarted || g.Before != nil {
					t.Errorf("gauge %+v", g)
				}
			}
		})
	}
}

// llama.cpp has counters only: means from their deltas, the rest n/a.
func TestLlamaCPPMeans(t *testing.T) {
	raw, err := os.ReadFile("testdata/llamacpp.txt")
	if err != nil {
		t.Fatal(err)
	}
	after := strings.NewReplacer(
		"llamacpp:prompt_tokens_total 23", "llamacpp:prompt_tokens_total 123",
		"llamacpp:prompt_seconds_total 0.008473", "llamacpp:prompt_seconds_total 0.508473",
		"llamacpp:tokens_predicted_total 18", "llamacpp:tokens_predicted_total 68",
		"llamacpp:tokens_predicted_seconds_total 0.009153", "llamacpp:tokens_predicted_seconds_total 1.009153",
		"llamacpp:requests_deferred 0", "llamacpp:requests_deferred 2",
	).Replace(string(raw))
	w := Compare(pageOf(t, string(raw)), pageOf(t, after), Options{Engine: "llamacpp"})
	if w.Family != config.EngineFamilyLlamaCPP || w.Error != "" {
		t.Fatalf("window %+v", w)
	}
	tpot, _ := w.Lookup(MetricTPOT)
	if tpot.Mean == nil || !near(*tpot.Mean, 1.0/50) || *tpot.Count != 50 || len(tpot.Quantiles) != 0 || !strings.Contains(tpot.Note, "a mean, no percentiles") {
		t.Errorf("tpot %+v", tpot)
	}
	ppt, ok := w.Lookup(MetricPrefillPerToken)
	if !ok || ppt.Mean == nil || !near(*ppt.Mean, 0.5/100) {
		t.Errorf("prefill_per_token %+v", ppt)
	}
	wantNA(t, w, MetricTTFT, "counters only")
	wantNA(t, w, MetricQueue, "no queue figure")
	for _, g := range w.Gauges {
		if g.Metric == GaugeWaiting && (g.After == nil || *g.After != 2) {
			t.Errorf("waiting %+v", g)
		}
		if g.Metric == GaugeKVCache && g.NA == "" {
			t.Errorf("llama.cpp kv cache should be n/a: %+v", g)
		}
	}
	// No token between the scrapes: n/a, not 0.
	w = Compare(pageOf(t, string(raw)), pageOf(t, string(raw)), Options{Family: "llamacpp"})
	wantNA(t, w, MetricTPOT, "no token counted")
}

func TestOtherFamilies(t *testing.T) {
	t.Run("sglang", func(t *testing.T) {
		w := Compare(page(t, "sglang-before.txt"), page(t, "sglang-after.txt"), Options{Engine: "sglang", Model: "Qwen/Qwen2.5-7B-Instruct"})
		wantFigure(t, w, MetricTTFT, 10, 0.11, ttftWant)
		// queue buckets 0 0.1 0.2 0.3: rank 5 of 8 in (0.2, 0.3].
		wantFigure(t, w, MetricQueue, 10, 0.1, map[string][3]float64{"p50": {0.2 + 0.1*5.0/8, 0.2, 0.3}})
		if f, _ := w.Lookup(MetricPrefill); f.Source != `sglang:per_stage_req_latency_seconds{stage="prefill_forward"}` || f.Count == nil || *f.Count != 10 || !near(*f.Mean, 0.05) {
			t.Errorf("prefill %+v", f)
		}
		if f, _ := w.Lookup(MetricDecode); f.Count == nil || *f.Count != 10 || !near(*f.Mean, 1.3) {
			t.Errorf("decode %+v", f)
		}
		wantNA(t, w, MetricTPOT, "SGLang exports no per-request")
	})
	t.Run("tgi", func(t *testing.T) {
		w := Compare(page(t, "tgi-before.txt"), page(t, "tgi-after.txt"), Options{Family: "tgi", Model: "ignored: tgi has no model label"})
		wantNA(t, w, MetricTTFT, "TGI exports no TTFT histogram")
		wantNA(t, w, MetricPrefill, "per batch")
		wantFigure(t, w, MetricQueue, 10, 0.1, queueWant)
		wantFigure(t, w, MetricE2E, 10, 1.3, nil)
		wantFigure(t, w, MetricTPOT, 10, 0.017, nil)
		if w.Model != "" {
			t.Errorf("tgi has no model label, yet model %q", w.Model)
		}
	})
	t.Run("trtllm", func(t *testing.T) {
		w := Compare(page(t, "trtllm-before.txt"), page(t, "trtllm-after.txt"), Options{Family: "trtllm", Model: "nvidia/Llama-3.1-8B-Instruct-FP8"})
		wantFigure(t, w, MetricTTFT, 10, 0.11, ttftWant)
		wantFigure(t, w, MetricQueue, 10, 0.1, queueWant)
		wantFigure(t, w, MetricPrefill, 10, 0.017, nil)
		wantNA(t, w, MetricITL, "TensorRT-LLM exports no per-token gap")
	})
}

func TestFamilyResolution(t *testing.T) {
	before, after := page(t, "vllm-before.txt"), page(t, "vllm-after.txt")
	for _, c := range []struct{ family, engine, want, source string }{
		{"auto", "llmprobe-sim", "vllm", "target_info detected engine llmprobe-sim"},
		{"auto", "unknown", "vllm", "from the page's metric names"},
		{"", "", "vllm", "from the page's metric names (target_info engine unknown)"},
		{"sglang", "vllm", "sglang", "configured"},
	} {
		w := Compare(before, after, Options{Family: c.family, Engine: c.engine})
		if w.Family != c.want || !strings.Contains(w.FamilySource, c.source) {
			t.Errorf("%s/%s: family %q (%s), want %q (%s)", c.family, c.engine, w.Family, w.FamilySource, c.want, c.source)
		}
	}
	// A configured family the page does not speak: every figure says so.
	w := Compare(before, after, Options{Family: "sglang"})
	wantNA(t, w, MetricTTFT, "the page has no sglang:time_to_first_token_seconds")
	// Neither target_info nor the page names a family.
	empty := pageOf(t, "# TYPE foo counter\nfoo 1\n")
	w = Compare(empty, empty, Options{Engine: "nim"})
	if !strings.Contains(w.Error, `target_info says engine "nim"`) || !strings.Contains(w.Error, "set engine_metrics.family") {
		t.Errorf("error %q", w.Error)
	}
	wantNA(t, w, MetricTTFT, "set engine_metrics.family")
}

func TestScrapeFailureMakesWindowNA(t *testing.T) {
	ok := page(t, "vllm-after.txt")
	w := Compare(&Page{Error: "HTTP 501 Not Implemented"}, ok, Options{Family: "vllm"})
	if w.Error != "the scrape before failed: HTTP 501 Not Implemented" {
		t.Errorf("error %q", w.Error)
	}
	wantNA(t, w, MetricTTFT, "HTTP 501")
	w = Compare(ok, &Page{Error: "timeout"}, Options{Family: "vllm"})
	wantNA(t, w, MetricQueue, "the scrape after failed: timeout")
}

func TestNoRequestBetweenScrapes(t *testing.T) {
	p := page(t, "vllm-after.txt")
	w := Compare(p, p, Options{Family: "vllm", Model: vllmModel})
	f, _ := w.Lookup(MetricTTFT)
	if f.Count == nil || *f.Count != 0 || f.NA != "no request finished between the scrapes" || f.Mean != nil {
		t.Errorf("ttft %+v", f)
	}
}

func TestBucketQuantile(t *testing.T) {
	inf := math.Inf(1)
	les := []float64{0.1, 0.2, 0.5, inf}
	for _, c := range []struct {
		q, want, lower float64
		upper          float64
		cum            []float64
	}{
		{0.5, 0.175, 0.1, 0.2, []float64{2, 6, 9, 10}},
		{0.9, 0.5, 0.2, 0.5, []float64{2, 6, 9, 10}},
		{0.99, 0.5, 0.5, inf, []float64{2, 6, 9, 10}}, // in +Inf: the last finite bound
		{0.1, 0.05, 0, 0.1, []float64{2, 6, 9, 10}},   // first bucket starts at 0
		{0.9, 0.5, 0.5, inf, []float64{2, 6, 5, 10}},  // torn counts kept monotonic: 5 read as 6
	} {
		q, ok := bucketQuantile(c.q, les, c.cum)
		upper := inf
		if q.BucketUpper != nil {
			upper = *q.BucketUpper
		}
		if !ok || !near(q.Value, c.want) || q.BucketLower != c.lower || upper != c.upper {
			t.Errorf("q%g of %v = %+v (upper %g), want %g in [%g, %g]", c.q, c.cum, q, upper, c.want, c.lower, c.upper)
		}
	}
	if _, ok := bucketQuantile(0.5, les, []float64{0, 0, 0, 0}); ok {
		t.Error("an empty histogram gave a quantile")
	}
}
