package prober

// WhyNoTimings says why a successful answer from engine (an Info.Engine)
// carried no per-request timings, and how to get them only where engine
// has them: vLLM (and llmprobe's sim, which answers as vLLM does) when
// started with --enable-per-request-metrics and asked per request, which
// the target does when its extra_body sets include_metrics (asked);
// llama.cpp's server with every answer. Other engines report none.
func WhyNoTimings(engine string, asked bool) string {
	switch engine {
	case engineVLLM, engineSim:
		if asked {
			return "the request asked (extra_body include_metrics) but the engine sent none: vLLM sends them only when started with --enable-per-request-metrics"
		}
		return "the engine sent none; vLLM sends them when started with --enable-per-request-metrics and asked with extra_body include_metrics: true"
	case engineLlamaCPP:
		return "the answer had no timings object, which llama.cpp's server sends with every answer (a proxy in between may drop it)"
	case "", engineUnknown:
		return "the engine sent none (the target has not said which engine it is)"
	}
	return "the engine sent none: " + engine + " reports no per-request timings"
}
