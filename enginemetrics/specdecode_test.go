package enginemetrics

import (
	"fmt"
	"strings"
	"testing"
)

// vLLM's counters: acceptance rate = Δaccepted / Δdraft tokens, mean
// acceptance length = 1 + Δaccepted / Δdrafts, for the window's model only.
func TestSpecDecodeFromVLLMCounters(t *testing.T) {
	pageAt := func(drafts, tokens, accepted float64) *Page {
		var b strings.Builder
		for _, c := range []struct {
			name string
			v    float64
		}{{"vllm:spec_decode_num_drafts_total", drafts}, {"vllm:spec_decode_num_draft_tokens_total", tokens}, {"vllm:spec_decode_num_accepted_tokens_total", accepted}} {
			fmt.Fprintf(&b, "# TYPE %s counter\n%s{model_name=%q,engine=\"0\"} %g\n%s{model_name=\"other\",engine=\"0\"} 1000\n", c.name, c.name, vllmModel, c.v, c.name)
		}
		return pageOf(t, b.String())
	}
	w := Compare(pageAt(10, 30, 20), pageAt(110, 330, 230), Options{Family: "vllm", Model: vllmModel})
	sd := w.SpecDecode
	if sd == nil || sd.NA != "" || sd.AcceptanceRate == nil || !near(*sd.AcceptanceRate, 0.7) || !near(*sd.MeanAcceptanceLength, 3.1) || *sd.Drafts != 100 {
		t.Fatalf("spec decode %+v", sd)
	}
	if sd = Compare(pageAt(10, 30, 20), pageAt(10, 30, 20), Options{Family: "vllm", Model: vllmModel}).SpecDecode; sd.AcceptanceRate != nil || !strings.Contains(sd.NA, "no draft between the scrapes") {
		t.Errorf("no draft in the window: %+v", sd)
	}
	// Without a draft model vLLM exports no such series: n/a, not 0.
	if sd = Compare(page(t, "vllm-before.txt"), page(t, "vllm-after.txt"), Options{Family: "vllm", Model: vllmModel}).SpecDecode; sd == nil || sd.AcceptanceRate != nil || !strings.Contains(sd.NA, "no draft model") {
		t.Errorf("no draft model: %+v", sd)
	}
}

// SGLang's gauges are its own averages: the mean of the reads during the
// run, marked as such; a gauge of 0 says no acceptance.
func TestSpecDecodeFromSGLangGauges(t *testing.T) {
	pageAt := func(rate, length float64) *Page {
		return pageOf(t, fmt.Sprintf("# TYPE sglang:spec_accept_rate gauge\nsglang:spec_accept_rate{model_name=\"m\"} %g\n# TYPE sglang:spec_accept_length gauge\nsglang:spec_accept_length{model_name=\"m\"} %g\n", rate, length))
	}
	w := Compare(pageAt(0.5, 2.5), pageAt(0.5, 2.5), Options{Family: "sglang", Model: "m", During: []*Page{pageAt(0.6, 2.8), pageAt(0.8, 3.4)}})
	sd := w.SpecDecode
	if sd == nil || sd.NA != "" || !near(*sd.AcceptanceRate, 0.7) || !near(*sd.MeanAcceptanceLength, 3.1) || sd.Drafts != nil || !strings.Contains(sd.Source, "a mean of 2 reads") {
		t.Fatalf("spec decode %+v", sd)
	}
	if sd = Compare(pageAt(0, 0), pageAt(0, 0), Options{Family: "sglang", Model: "m"}).SpecDecode; sd.AcceptanceRate != nil || !strings.Contains(sd.NA, "reports no acceptance") {
		t.Errorf("zero gauges: %+v", sd)
	}
}

// llama.cpp's real page has the counters at 0 without a draft model; TGI
// exports none at all.
func TestSpecDecodeOtherFamilies(t *testing.T) {
	p := page(t, "llamacpp.txt")
	if sd := Compare(p, p, Options{Family: "llamacpp"}).SpecDecode; sd == nil || sd.AcceptanceRate != nil || !strings.Contains(sd.NA, "no draft between the scrapes") {
		t.Errorf("llama.cpp: %+v", sd)
	}
	if sd := Compare(page(t, "tgi-before.txt"), page(t, "tgi-after.txt"), Options{Family: "tgi"}).SpecDecode; sd != nil {
		t.Errorf("TGI: %+v", sd)
	}
}

// vLLM's LoRA info: the newest label set is the state (older ones stay on
// the page, with older times as their values).
func TestLoRAInfoNewestSeries(t *testing.T) {
	p := pageOf(t, `# TYPE vllm:lora_requests_info gauge
vllm:lora_requests_info{max_lora="4",running_lora_adapters="a",waiting_lora_adapters=""} 100
vllm:lora_requests_info{max_lora="4",running_lora_adapters="a,b",waiting_lora_adapters="c"} 200
`)
	l := Compare(p, p, Options{Family: "vllm"}).LoRA
	if l == nil || l.MaxLoRA != "4" || strings.Join(l.Running, ",") != "a,b" || strings.Join(l.Waiting, ",") != "c" {
		t.Fatalf("lora %+v", l)
	}
	if l := Compare(page(t, "vllm-before.txt"), page(t, "vllm-after.txt"), Options{Family: "vllm"}).LoRA; l != nil {
		t.Errorf("a page without LoRA: %+v", l)
	}
}
