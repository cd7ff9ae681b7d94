package prober

import (
	"strings"
	"testing"
)

// The include_metrics hint goes only to an engine that has per-request
// timings to give, and says what is missing where the target already asks.
func TestWhyNoTimings(t *testing.T) {
	for _, c := range []struct {
		engine string
		asked  bool
		want   string
	}{
		{engineVLLM, false, "started with --enable-per-request-metrics and asked with extra_body include_metrics: true"},
		{engineSim, false, "asked with extra_body include_metrics: true"},
		{engineVLLM, true, "the request asked (extra_body include_metrics) but the engine sent none: vLLM sends them only when started with --enable-per-request-metrics"},
		{engineLlamaCPP, false, "llama.cpp's server sends with every answer"},
		{engineSGLang, false, "sglang reports no per-request timings"},
		{engineOllama, true, "ollama reports no per-request timings"},
		{engineUnknown, false, "has not said which engine it is"},
		{"", false, "has not said which engine it is"},
	} {
		got := WhyNoTimings(c.engine, c.asked)
		if !strings.Contains(got, c.want) {
			t.Errorf("WhyNoTimings(%q, %v) = %q, want %q in it", c.engine, c.asked, got, c.want)
		}
		if vllm := c.engine == engineVLLM || c.engine == engineSim; !vllm && strings.Contains(got, "include_metrics") {
			t.Errorf("WhyNoTimings(%q) suggests include_metrics, which only vLLM reads: %q", c.engine, got)
		}
	}
}
