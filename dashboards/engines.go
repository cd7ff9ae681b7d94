package dashboards

import (
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// engineSel selects an engine's own series by llmprobe's target name: the
// engine's scrape job adds the label (docs/dashboards.md).
const engineSel = `target=~"$target"`

// family is one engine family's row: its own metric names, shown only for the
// targets whose llmprobe_target_info names that engine.
type family struct {
	name    string
	engines string // llmprobe_target_info engine values, a regex
	running, waiting,
	generated, prompt string // expressions by target
	latency, second panelSpec
	// spec is the draft model's acceptance, for families that export it.
	spec *panelSpec
}

// panelSpec is a family's engine-specific panel.
type panelSpec struct {
	title, description, unit string
	queries                  []Query
}

// only keeps the series of targets whose target_info names the family's engine.
func (f family) only(expr string) string {
	return `(` + expr + `) and on (target) llmprobe_target_info{engine=~"` + f.engines + `", ` + engineSel + `}`
}

func sumRate(metric string) string {
	return `sum by (target) (rate(` + metric + `{` + engineSel + `}[$__rate_interval]))`
}

func gaugeByTarget(metric string) string {
	return `sum by (target) (` + metric + `{` + engineSel + `})`
}

// meanOf is a mean from a counter pair: rate(sum) / rate(count).
func meanOf(sum, count string) string { return sumRate(sum) + ` / ` + sumRate(count) }

// llmprobe's own canary view of the same targets, for comparison.
const llmprobeCanary = `traffic="canary", ` + engineSel

// ttftVersusLLMProbe puts an engine's TTFT histogram next to llmprobe's.
func ttftVersusLLMProbe(name, metric string) panelSpec {
	return panelSpec{name + " TTFT p99: engine vs llmprobe", name + "'s TTFT histogram (from arrival at the server) next to llmprobe's canary TTFT (from when the request was due): the gap is network, queueing in front of the engine and the prober.", unitSeconds, []Query{
		q(classicQuantile("0.99", metric, engineSel, "target"), "{{target}} engine p99"),
		q(quantile("0.99", "llmprobe_time_to_first_token_seconds", llmprobeCanary, "target"), "{{target}} llmprobe p99"),
	}}
}

// specCounters is the acceptance of a family that counts drafts (vLLM,
// llama.cpp): accepted over draft tokens, and the tokens a step gives.
func specCounters(name, prefix string) *panelSpec {
	accepted, tokens, drafts := prefix+"spec_decode_num_accepted_tokens_total", prefix+"spec_decode_num_draft_tokens_total", prefix+"spec_decode_num_drafts_total"
	return &panelSpec{name + " speculative decoding: acceptance", "The share of draft tokens the target model accepted (" + accepted + " over " + tokens + ") and the mean acceptance length, the tokens a step gives (1 + accepted over " + drafts + "), in the range. No line: no draft model. A falling acceptance explains a TPOT or ITL rise nothing else does.", unitNone, []Query{
		q(meanOf(accepted, tokens), "{{target}} acceptance rate"),
		q(`1 + `+meanOf(accepted, drafts), "{{target}} mean acceptance length"),
	}}
}

func kvUsage(title, source, expr string) panelSpec {
	return panelSpec{title, "Share of the KV cache in use (" + source + ").", unitRatio, []Query{q(expr, "{{target}}")}}
}

var families = []family{
	{
		name: "vLLM", engines: "vllm|llmprobe-sim",
		running: gaugeByTarget("vllm:num_requests_running"), waiting: gaugeByTarget("vllm:num_requests_waiting"),
		generated: sumRate("vllm:generation_tokens_total"), prompt: sumRate("vllm:prompt_tokens_total"),
		latency: ttftVersusLLMProbe("vLLM", "vllm:time_to_first_token_seconds"),
		second: kvUsage("vLLM KV cache usage", "vllm:kv_cache_usage_perc; vllm:gpu_cache_usage_perc before vLLM V1",
			`max by (target) (vllm:kv_cache_usage_perc{`+engineSel+`}) or max by (target) (vllm:gpu_cache_usage_perc{`+engineSel+`})`),
		spec: specCounters("vLLM", "vllm:"),
	},
	{
		name: "SGLang", engines: "sglang",
		running: gaugeByTarget("sglang:num_running_reqs"), waiting: gaugeByTarget("sglang:num_queue_reqs"),
		generated: sumRate("sglang:generation_tokens_total"), prompt: sumRate("sglang:prompt_tokens_total"),
		latency: ttftVersusLLMProbe("SGLang", "sglang:time_to_first_token_seconds"),
		second:  kvUsage("SGLang token usage", "sglang:token_usage", `max by (target) (sglang:token_usage{`+engineSel+`})`),
		spec: &panelSpec{"SGLang speculative decoding: acceptance", "SGLang's own averages of its draft model's acceptance rate (sglang:spec_accept_rate) and acceptance length (sglang:spec_accept_length), over its logging window, not the range. 0 or no line: no draft model.", unitNone, []Query{
			q(`avg by (target) (sglang:spec_accept_rate{`+engineSel+`})`, "{{target}} acceptance rate"),
			q(`avg by (target) (sglang:spec_accept_length{`+engineSel+`})`, "{{target}} mean acceptance length"),
		}},
	},
	{
		name: "TGI", engines: "tgi",
		running: gaugeByTarget("tgi_batch_current_size"), waiting: gaugeByTarget("tgi_queue_size"),
		generated: sumRate("tgi_request_generated_tokens_sum"), prompt: sumRate("tgi_request_input_length_sum"),
		latency: panelSpec{"TGI queue time p99 and llmprobe TTFT p99", "TGI exports no TTFT: its queue time per request (tgi_request_queue_duration) next to llmprobe's canary TTFT, which contains it.", unitSeconds, []Query{
			q(classicQuantile("0.99", "tgi_request_queue_duration", engineSel, "target"), "{{target}} engine queue p99"),
			q(quantile("0.99", "llmprobe_time_to_first_token_seconds", llmprobeCanary, "target"), "{{target}} llmprobe TTFT p99"),
		}},
		second: panelSpec{"TGI time per token p99: engine vs llmprobe", "TGI's mean time per token of each request (tgi_request_mean_time_per_token_duration) next to llmprobe's canary TPOT.", unitSeconds, []Query{
			q(classicQuantile("0.99", "tgi_request_mean_time_per_token_duration", engineSel, "target"), "{{target}} engine p99"),
			q(quantile("0.99", "llmprobe_time_per_output_token_seconds", llmprobeCanary, "target"), "{{target}} llmprobe TPOT p99"),
		}},
	},
	{
		name: "llama.cpp", engines: "llamacpp",
		running: gaugeByTarget("llamacpp:requests_processing"), waiting: gaugeByTarget("llamacpp:requests_deferred"),
		generated: sumRate("llamacpp:tokens_predicted_total"), prompt: sumRate("llamacpp:prompt_tokens_total"),
		latency: panelSpec{"llama.cpp prompt time per token", "llama.cpp exports no latency histograms: its prompt processing time per prompt token (prompt_seconds_total over prompt_tokens_total) in the range.", unitSeconds, []Query{
			q(meanOf("llamacpp:prompt_seconds_total", "llamacpp:prompt_tokens_total"), "{{target}} engine"),
		}},
		second: panelSpec{"llama.cpp time per generated token: engine vs llmprobe", "Mean generation time per token (tokens_predicted_seconds_total over tokens_predicted_total) next to llmprobe's mean canary inter-token latency.", unitSeconds, []Query{
			q(meanOf("llamacpp:tokens_predicted_seconds_total", "llamacpp:tokens_predicted_total"), "{{target}} engine mean"),
			q(`sum by (target) (rate(llmprobe_inter_token_latency_seconds_sum{`+llmprobeCanary+`}[$__rate_interval])) / sum by (target) (rate(llmprobe_inter_token_latency_seconds_count{`+llmprobeCanary+`}[$__rate_interval]))`, "{{target}} llmprobe mean ITL"),
		}},
		spec: specCounters("llama.cpp", "llamacpp:"),
	},
}

func (f family) panels(b *dashboard.DashboardBuilder) *dashboard.DashboardBuilder {
	spec := func(s panelSpec) []Query {
		out := make([]Query, len(s.queries))
		for i, query := range s.queries {
			out[i] = q(f.only(query.Expr), query.Legend)
		}
		return out
	}
	b = b.WithRow(row(f.name + " (targets whose target_info says " + strings.ReplaceAll(f.engines, "|", " or ") + ")")).
		WithPanel(timeSeries(f.name+" requests running and waiting", "Requests in the engine's batch and in its queue.", unitCount,
			q(f.only(f.running), "{{target}} running"), q(f.only(f.waiting), "{{target}} waiting")).Span(6)).
		WithPanel(timeSeries(f.name+" token throughput", "Output and prompt tokens per second the engine processed.", unitTokPerSec,
			q(f.only(f.generated), "{{target}} output"), q(f.only(f.prompt), "{{target}} prompt")).Span(6)).
		WithPanel(timeSeries(f.latency.title, f.latency.description, f.latency.unit, spec(f.latency)...).Span(6)).
		WithPanel(timeSeries(f.second.title, f.second.description, f.second.unit, spec(f.second)...).Span(6))
	if s := f.spec; s != nil {
		b = b.WithPanel(timeSeries(s.title, s.description, s.unit, spec(*s)...).Span(12))
	}
	return b
}

func engines() *dashboard.DashboardBuilder {
	b := base("llmprobe-engines", "llmprobe / Engines",
		"Each engine's own metrics next to llmprobe's, one row per engine family found in llmprobe_target_info, filtered by the selected targets. The engine's scrape job must add the label target=<llmprobe target name> (docs/dashboards.md).", "engines").
		WithVariable(labelVariable("target", "Target", "llmprobe_target_info")).
		WithRow(row("Targets")).
		WithPanel(tablePanel("Targets and engines", "What each target says it runs (llmprobe_target_info) and whether its last request succeeded.",
			[]string{"target", "engine", "engine_version"},
			column{name: "Up", unit: unitNone, th: goodWhenOne(),
				expr:     `max by (target, engine, engine_version) (llmprobe_target_info{` + engineSel + `}) * on (target) group_left () max by (target) (llmprobe_target_up{` + engineSel + `})`,
				mappings: []dashboard.ValueMapping{texts([3]string{"0", "down", "red"}, [3]string{"1", "up", "green"})}}).Height(6))
	for _, f := range families {
		b = f.panels(b)
	}
	return b
}
