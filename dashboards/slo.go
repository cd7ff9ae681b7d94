package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// errRatio is the share of canary checks that missed their objective over
// window, per target, scenario and objective.
func errRatio(window string) string {
	return `sum by (target, scenario, objective) (increase(llmprobe_slo_checks_total{result="missed", ` + canarySel + `}[` + window + `]))
/
sum by (target, scenario, objective) (increase(llmprobe_slo_checks_total{` + canarySel + `}[` + window + `]))`
}

// budgetLeft is 1 - (error ratio over 30 days / the ratio the objective allows).
var budgetLeft = `1 - ((` + errRatio("30d") + `) / on (scenario, objective) group_left () max by (scenario, objective) (1 - llmprobe_slo_target_ratio))`

// alertState is 2 while an SLO alert fires, 1 while one is pending, and 0 for
// every objective with checks and no alert: ALERTS has no series for "ok".
var alertState = `max by (target, scenario, objective) (
  2 * ALERTS{alertname=~"LLMProbeSLO.*", alertstate="firing", target=~"$target", model=~"$model", scenario=~"$scenario"}
  or ALERTS{alertname=~"LLMProbeSLO.*", alertstate="pending", target=~"$target", model=~"$model", scenario=~"$scenario"}
  or 0 * llmprobe_slo_checks_total{` + canarySel + `}
)`

func sloOverview() *dashboard.DashboardBuilder {
	burn := func(window string) string {
		return `max by (target, scenario, objective) (llmprobe:slo_burn_rate:rate` + window + `{traffic="canary", target=~"$target", model=~"$model", scenario=~"$scenario"})`
	}
	b := withProbeVariables(base("llmprobe-slo", "llmprobe / SLO overview",
		"Each configured objective per target and scenario: SLI, error budget left, burn rates, alert state, thresholds and goodput.", "slo"))
	return b.
		WithRow(row("Status")).
		WithPanel(tablePanel("SLO status", "One row per target, scenario and objective (canary traffic): share of checks that met the objective over 1 hour and 30 days, error budget left over 30 days, burn rate over the last hour (1 spends the budget in exactly 30 days; 14.4 pages), and the state of the LLMProbeSLO* alerts.",
			[]string{"target", "scenario", "objective"},
			column{name: "SLI 1h", unit: unitRatio, expr: `1 - (` + errRatio("1h") + `)`},
			column{name: "SLI 30d", unit: unitRatio, expr: `1 - (` + errRatio("30d") + `)`},
			column{name: "Error budget left (30d)", unit: unitRatio, expr: budgetLeft, th: budgetLevels()},
			column{name: "Burn rate (1h)", unit: unitNone, expr: burn("1h"), th: burnLevels()},
			column{name: "Alert", unit: unitNone, expr: alertState,
				mappings: []dashboard.ValueMapping{texts([3]string{"0", "ok", "green"}, [3]string{"1", "pending", "orange"}, [3]string{"2", "firing", "red"})}})).
		WithPanel(statPanel("Firing llmprobe alerts", "Number of llmprobe alerts firing now; the alert list is in Grafana's alerting view.", unitNone, levels("green", level{1, "red"}),
			q(`count(ALERTS{alertname=~"LLMProbe.*", alertstate="firing"}) or vector(0)`, "firing"))).
		WithPanel(statPanel("Worst burn rate (1h)", "Highest canary burn rate over the last hour of any objective: 1 spends the error budget in exactly 30 days, 6 and 14.4 are the paging factors.", unitNone, burnLevels(),
			q(`max(`+burn("1h")+`)`, "worst"))).
		WithPanel(statPanel("Least error budget left", "Smallest error budget left over 30 days of any objective: 100% untouched, 0 spent, below 0 overspent.", unitRatio, budgetLevels(),
			q(`min(`+budgetLeft+`)`, "least"))).
		WithPanel(statPanel("Goodput ratio", "Share of canary requests that succeeded and met every objective. Colours are fixed (below 99% orange, below 95% red); each objective's own target is judged in the SLO status table.", unitRatio,
			levels("red", level{0.95, "orange"}, level{0.99, "green"}),
			q(`sum(rate(llmprobe_good_requests_total{`+canarySel+`}[$__rate_interval])) / sum(rate(llmprobe_requests_total{`+canarySel+`}[$__rate_interval]))`, "goodput"))).
		WithRow(row("Objectives")).
		WithPanel(statPanel("Thresholds", "Configured threshold of each objective (llmprobe_slo_objective_seconds): the lines drawn on the latency dashboard.", unitSeconds, neutral(),
			q(`max by (scenario, objective) (llmprobe_slo_objective_seconds{scenario=~"$scenario"})`, "{{scenario}} {{objective}}"))).
		WithPanel(statPanel("Target ratios", "Share of requests that must meet each objective (llmprobe_slo_target_ratio).", unitRatio, neutral(),
			q(`max by (scenario, objective) (llmprobe_slo_target_ratio{scenario=~"$scenario"})`, "{{scenario}} {{objective}}"))).
		WithPanel(statPanel("p99 over objective", "Canary p99 of TTFT, TPOT and E2E over each configured threshold: 100% is the objective, red beyond it. For a target ratio of 0.99 this is the SLO itself; the SLI is in the status table.", unitRatio, objectiveLevels(),
			objectiveRatios()...)).
		WithRow(row("SLI and error budget (30 days)")).
		WithPanel(timeSeries("SLI over 30 days", "Share of canary checks that met the objective over the last 30 days.", unitRatio,
			q(`1 - (`+errRatio("30d")+`)`, "{{target}} {{scenario}} {{objective}}"))).
		WithPanel(timeSeries("Error budget left", "1 - (error ratio over 30 days / (1 - target ratio)): 100% is untouched, 0 spent, below 0 overspent.", unitRatio,
			q(budgetLeft, "{{target}} {{scenario}} {{objective}}")).
			Thresholds(budgetLevels()).ThresholdsStyle(thresholdLines())).
		WithRow(row("Burn rates")).
		WithPanel(timeSeries("Burn rate, short windows", "Error ratio over the budget's ratio, from the recording rules: 14.4 over 5m and 1h pages.", unitNone,
			q(burn("5m"), "5m {{target}} {{scenario}} {{objective}}"),
			q(burn("1h"), "1h {{target}} {{scenario}} {{objective}}")).
			Thresholds(burnLevels()).ThresholdsStyle(thresholdLines())).
		WithPanel(timeSeries("Burn rate, long windows", "6 over 30m and 6h pages; 3 over 2h and 1d and 1 over 6h and 3d warn.", unitNone,
			q(burn("6h"), "6h {{target}} {{scenario}} {{objective}}"),
			q(burn("3d"), "3d {{target}} {{scenario}} {{objective}}")).
			Thresholds(burnLevels()).ThresholdsStyle(thresholdLines())).
		WithRow(row("Goodput")).
		WithPanel(timeSeries("Good requests", "Requests per second that succeeded and met every objective.", unitReqPerSec,
			q(`sum by (target, scenario) (rate(llmprobe_good_requests_total{`+probeSel+`}[$__rate_interval]))`, "{{target}} {{scenario}}"))).
		WithPanel(timeSeries("Good output tokens", "Output tokens per second of good requests.", unitTokPerSec,
			q(`sum by (target, scenario) (rate(llmprobe_good_output_tokens_total{`+probeSel+`}[$__rate_interval]))`, "{{target}} {{scenario}}"))).
		WithRow(row("Answer quality")).
		WithPanel(timeSeries("Answers passing their checks", "Share of canary answers that passed their checks (a golden set's lines, a scenario's quality; llmprobe_quality_checks_total), per target and scenario, beside each scenario's slo.quality_ratio: LLMProbeQualityCheckFailing fires when the share stays below it (below 90% where none is set) for 15 minutes. A faster engine whose answers got worse shows here, not in the latencies (docs/golden.md).", unitRatio,
			q(qualityPassed, "{{target}} {{scenario}}"),
			q(`max by (scenario) (llmprobe_slo_target_ratio{objective="quality", scenario=~"$scenario"})`, "{{scenario}} quality_ratio")).Span(24))
}

// qualityPassed is the share of canary answers that passed their checks.
var qualityPassed = `sum by (target, scenario) (rate(llmprobe_quality_checks_total{result="passed", ` + canarySel + `}[$__rate_interval]))
/
sum by (target, scenario) (rate(llmprobe_quality_checks_total{` + canarySel + `}[$__rate_interval]))`

// latencyObjectives pairs each latency objective with its histogram.
var latencyObjectives = []struct{ objective, metric string }{
	{"ttft", "llmprobe_time_to_first_token_seconds"},
	{"tpot", "llmprobe_time_per_output_token_seconds"},
	{"e2e", "llmprobe_request_duration_seconds"},
}

// objectiveRatios are canary p99 over the configured threshold, per objective.
func objectiveRatios() []Query {
	var out []Query
	for _, o := range latencyObjectives {
		out = append(out, q(quantile("0.99", o.metric, canarySel, "target, scenario")+
			` / on (scenario) group_left () max by (scenario) (llmprobe_slo_objective_seconds{objective="`+o.objective+`", scenario=~"$scenario"})`,
			"{{target}} {{scenario}} "+o.objective))
	}
	return out
}

func latency() *dashboard.DashboardBuilder {
	b := withProbeVariables(base("llmprobe-latency", "llmprobe / Latency",
		"TTFT, ITL, TPOT and end-to-end latency as llmprobe measured them, each with its configured objective; the engines' own view is on the Engines dashboard.", "latency"))
	return b.
		WithRow(row("Client view (canary)")).
		WithPanel(statPanel("p99 over objective", "Canary p99 over the configured threshold (llmprobe_slo_objective_seconds): 100% is the objective; yellow from 80%, red beyond it.", unitRatio, objectiveLevels(),
			objectiveRatios()...).Span(24)).
		WithPanel(withObjective(timeSeries("Time to first token", "From when the request was due to its first output token; the dashed red line is the ttft objective. Exemplars (the p99 query's) are single requests: one opens its page on llmprobe.", unitSeconds,
			quantiles("llmprobe_time_to_first_token_seconds", canarySel, "target, scenario")...), "ttft", 3)).
		WithPanel(withObjective(timeSeries("Inter-token latency", "Per token: a gap between chunks is split over the tokens the later chunk carried; the dashed red line is the stall objective (the longest gap allowed).", unitSeconds,
			quantiles("llmprobe_inter_token_latency_seconds", canarySel, "target, scenario")...), "stall", 3)).
		WithPanel(withObjective(timeSeries("Time per output token", "(E2E - TTFT) / (output tokens - 1) per request; the dashed red line is the tpot objective.", unitSeconds,
			quantiles("llmprobe_time_per_output_token_seconds", canarySel, "target, scenario")...), "tpot", 3)).
		WithPanel(withObjective(timeSeries("End-to-end latency", "From when the request was due to the end of its stream; the dashed red line is the e2e objective.", unitSeconds,
			quantiles("llmprobe_request_duration_seconds", canarySel, "target, scenario")...), "e2e", 3)).
		WithPanel(heatmapPanel("TTFT heatmap", "Distribution of canary TTFT over time (the native histogram where Prometheus ingests them, else the classic buckets); an exemplar opens its request's page on llmprobe.", unitSeconds,
			withExemplars(q(distribution("llmprobe_time_to_first_token_seconds", canarySel), "{{le}}")))).
		WithPanel(heatmapPanel("ITL heatmap", "Distribution of canary inter-token latency over time (the native histogram where Prometheus ingests them, else the classic buckets); an exemplar opens its request's page on llmprobe.", unitSeconds,
			withExemplars(q(distribution("llmprobe_inter_token_latency_seconds", canarySel), "{{le}}")))).
		WithRow(row("Where TTFT went (canary)")).
		WithPanel(timeSeries("TTFT by component, mean", "Each TTFT component of the series' last split request, averaged over the window and the selected series, stacked: the top is about the mean TTFT. engine_queue and engine_prefill are the engine's own figures (vLLM with per-request metrics, llama.cpp's prefill); network is what is left of the server side then; server_other is the server side an engine did not split. docs/troubleshooting.md walks through it; a burst report has each request's exact split.", unitSeconds,
			q(`avg by (component) (avg_over_time(llmprobe_probe_ttft_component_seconds{`+canarySel+`}[$__rate_interval]))`, "{{component}}")).
			Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNormal)).FillOpacity(40)).
		WithPanel(timeSeries("TTFT component, worst", "Each component's largest value over the window of any selected series (they do not add up: the slowest requests differ per component).", unitSeconds,
			q(`max by (component) (max_over_time(llmprobe_probe_ttft_component_seconds{`+canarySel+`}[$__rate_interval]))`, "{{component}} max"))).
		WithPanel(timeSeries("KV transfer, engine aggregate (disaggregated prefill)", "Where prefill runs apart from decode, the KV cache's transfer is a part of TTFT the split above cannot name. The engine's own histogram gives its mean over the range: every transfer it made, no request's own (vLLM's NIXL connector vllm:nixl_xfer_time_seconds; SGLang's sglang:kv_transfer_latency_ms, in ms, shown as seconds). The engine's scrape job must add the label target (docs/dashboards.md). No line: no KV connector.", unitSeconds,
			q(`sum by (target) (rate(vllm:nixl_xfer_time_seconds_sum{target=~"$target"}[$__rate_interval])) / sum by (target) (rate(vllm:nixl_xfer_time_seconds_count{target=~"$target"}[$__rate_interval]))`, "{{target}} vLLM"),
			q(`sum by (target) (rate(sglang:kv_transfer_latency_ms_sum{target=~"$target"}[$__rate_interval])) / sum by (target) (rate(sglang:kv_transfer_latency_ms_count{target=~"$target"}[$__rate_interval])) / 1000`, "{{target}} SGLang")).Span(24)).
		WithRow(row("Agents (canary)")).
		WithPanel(timeSeries("Time to first tool call", "Scenarios with tools only (docs/api-tools.md): from when the request was due to its first tool-call delta, the moment an agent can start acting; a request that answered in text instead has no sample. Whether the calls were right is llmprobe_quality_checks_total, on the SLO overview's Answer quality row.", unitSeconds,
			quantiles("llmprobe_time_to_first_tool_call_seconds", canarySel, "target, scenario")...).Span(24)).
		WithRow(row("Conversations (canary)")).
		WithPanel(timeSeries("TTFT by turn", "Conversation scenarios only (docs/conversations.md): p50 TTFT per turn from the native histogram (the turns have no classic buckets), the mean where Prometheus does not ingest native histograms. Where the engine's prefix cache serves the history, a turn's TTFT from turn 2 stays at or below turn 1's although its prompt is longer; turns climbing with the history say it does not (llmprobe_prompt_cached_tokens_total says what the engine reported it cached).", unitSeconds,
			q(`histogram_quantile(0.5, sum by (target, scenario, turn) (rate(llmprobe_conversation_ttft_seconds{`+canarySel+`}[$__rate_interval])))`+
				` or sum by (target, scenario, turn) (rate(llmprobe_conversation_ttft_seconds_sum{`+canarySel+`}[$__rate_interval])) / sum by (target, scenario, turn) (rate(llmprobe_conversation_ttft_seconds_count{`+canarySel+`}[$__rate_interval]))`,
				"{{target}} {{scenario}} turn {{turn}}")).Span(24)).
		WithRow(row("Prober and outcomes")).
		WithPanel(timeSeries("Dispatch delay p99", "How late llmprobe sent requests after they were due; above 5 ms a burst describes the prober. An exemplar opens its request's page on llmprobe.", unitSeconds,
			withExemplars(q(quantile("0.99", "llmprobe_dispatch_delay_seconds", probeSel, "traffic"), "{{traffic}} p99"))).
			Thresholds(levels("green", level{0.005, "red"})).ThresholdsStyle(thresholdLines())).
		WithPanel(timeSeries("Outcomes", "Requests per second by outcome; rejects and errors miss every objective.", unitReqPerSec,
			q(`sum by (outcome) (rate(llmprobe_requests_total{`+probeSel+`}[$__rate_interval]))`, "{{outcome}}"))).
		WithPanel(timeSeries("llmprobe held off its CPUs", "The share of time the CPU quota of llmprobe's own cgroup throttled it (llmprobe_cgroup_cpu_throttled_seconds_total). Every request in flight during a pause carries it as latency: a burst books it as llmprobe's own delay, a canary cannot tell it apart. Above the line for 15 minutes LLMProbeCPUThrottled fires: raise the pod's CPU limit. No data where llmprobe reads no cgroup.", unitRatio,
			q(`max by (instance) (rate(llmprobe_cgroup_cpu_throttled_seconds_total[$__rate_interval]))`, "{{instance}}")).
			Thresholds(levels("green", level{0.01, "red"})).ThresholdsStyle(thresholdLines()))
}
