// Package dashboards builds llmprobe's Grafana dashboards with Grafana's
// foundation SDK; `make generate` writes them as JSON next to this file.
package dashboards

//go:generate go run ./internal/generate .

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/heatmap"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// Selectors of the dashboard variables, shared by every probe query.
const (
	probeSel  = `target=~"$target", model=~"$model", scenario=~"$scenario"`
	canarySel = `traffic="canary", ` + probeSel
)

func ptr[T any](v T) *T { return &v }

var datasource = common.DataSourceRef{Type: ptr("prometheus"), Uid: ptr("${datasource}")}

// Query is one PromQL expression of a panel.
type Query struct {
	Expr, Legend string
}

func q(expr, legend string) Query { return Query{Expr: expr, Legend: legend} }

func target(query Query, ref string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().Expr(query.Expr).LegendFormat(query.Legend).RefId(ref).Datasource(datasource)
}

var refIDs = []string{"A", "B", "C", "D", "E", "F"}

func timeSeries(title, description, unit string, queries ...Query) *timeseries.PanelBuilder {
	p := timeseries.NewPanelBuilder().Title(title).Description(description).Unit(unit).Datasource(datasource).
		Height(8).Span(12).LineWidth(1).FillOpacity(10)
	for i, query := range queries {
		p.WithTarget(target(query, refIDs[i]))
	}
	return p
}

func statPanel(title, description, unit string, queries ...Query) *stat.PanelBuilder {
	p := stat.NewPanelBuilder().Title(title).Description(description).Unit(unit).Datasource(datasource).Height(4).Span(6)
	for i, query := range queries {
		p.WithTarget(target(query, refIDs[i]))
	}
	return p
}

func heatmapPanel(title, description, unit string, query Query) *heatmap.PanelBuilder {
	return heatmap.NewPanelBuilder().Title(title).Description(description).Unit(unit).Datasource(datasource).
		Height(8).Span(12).
		WithTarget(target(query, "A").Format(prometheus.PromQueryFormatHeatmap))
}

// thresholds colours a value: base below the first step, then each step's
// colour from its value up.
func thresholds(base string, steps ...dashboard.Threshold) *dashboard.ThresholdsConfigBuilder {
	return dashboard.NewThresholdsConfigBuilder().Mode(dashboard.ThresholdsModeAbsolute).
		Steps(append([]dashboard.Threshold{{Color: base}}, steps...))
}

// thresholdValue is thresholds for a field override, which takes the value.
func thresholdValue(base string, steps ...dashboard.Threshold) dashboard.ThresholdsConfig {
	return dashboard.ThresholdsConfig{Mode: dashboard.ThresholdsModeAbsolute, Steps: append([]dashboard.Threshold{{Color: base}}, steps...)}
}

func from(v float64, color string) dashboard.Threshold {
	return dashboard.Threshold{Value: &v, Color: color}
}

// badWhenSet is a yes/no stat where yes is the trouble (aborted, saturated).
func badWhenSet(p *stat.PanelBuilder) *stat.PanelBuilder {
	return p.Thresholds(thresholds("green", from(1, "red"))).ColorMode(common.BigValueColorModeBackground)
}

// goodWhenSet is a yes/no stat where yes is fine (passed, collector up).
func goodWhenSet(p *stat.PanelBuilder) *stat.PanelBuilder {
	return p.Thresholds(thresholds("red", from(1, "green"))).ColorMode(common.BigValueColorModeBackground)
}

// plain is a stat that states a setting: no colour says good or bad.
func plain(p *stat.PanelBuilder) *stat.PanelBuilder {
	return p.Thresholds(thresholds("text")).ColorMode(common.BigValueColorModeNone)
}

// objectiveSeries draws a scenario's configured threshold of objective as a
// dashed red line beside the latencies it judges.
func objectiveSeries(objective string) Query {
	return q(`max by (scenario) (llmprobe_slo_objective_seconds{objective="`+objective+`", scenario=~"$scenario"})`, "{{scenario}} "+objective+" objective")
}

func withObjectiveStyle(p *timeseries.PanelBuilder) *timeseries.PanelBuilder {
	return p.OverrideByRegexp(".* objective$", []dashboard.DynamicConfigValue{
		{Id: "custom.lineStyle", Value: map[string]any{"fill": "dash", "dash": []int{10, 10}}},
		{Id: "color", Value: map[string]any{"mode": "fixed", "fixedColor": "red"}},
		{Id: "custom.fillOpacity", Value: 0},
	})
}

// column is one instant query of a table, shown under name with unit.
type column struct {
	name, unit string
	query      Query
}

// tablePanel joins instant queries on their labels into one row per label
// set (merge), one column per query.
func tablePanel(title, description string, columns ...column) *table.PanelBuilder {
	p := table.NewPanelBuilder().Title(title).Description(description).Datasource(datasource).Height(8).Span(24).Unit("none").
		Footer(common.NewTableFooterOptionsBuilder().Show(false).Reducer([]string{}))
	rename := map[string]any{}
	for i, c := range columns {
		p.WithTarget(target(c.query, refIDs[i]).Instant().Format(prometheus.PromQueryFormatTable))
		rename["Value #"+refIDs[i]] = c.name
		p.OverrideByName(c.name, []dashboard.DynamicConfigValue{{Id: "unit", Value: c.unit}})
	}
	return p.WithTransformation(dashboard.DataTransformerConfig{Id: "merge", Options: map[string]any{}}).
		WithTransformation(dashboard.DataTransformerConfig{Id: "organize", Options: map[string]any{
			"excludeByName": map[string]any{"Time": true}, "renameByName": rename}})
}

func valueText(color string, text string) dashboard.ValueMappingResult {
	return dashboard.ValueMappingResult{Text: &text, Color: &color}
}

func datasourceVariable() *dashboard.DatasourceVariableBuilder {
	return dashboard.NewDatasourceVariableBuilder("datasource").Label("Data source").Type("prometheus")
}

func labelVariable(name, label, metric string) *dashboard.QueryVariableBuilder {
	return dashboard.NewQueryVariableBuilder(name).Label(label).
		Query(dashboard.StringOrMap{String: ptr("label_values(" + metric + ", " + name + ")")}).
		Datasource(datasource).Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Multi(true).IncludeAll(true).AllValue(".*")
}

func base(uid, title, description string, tags ...string) *dashboard.DashboardBuilder {
	return dashboard.NewDashboardBuilder(title).Uid(uid).Description(description).
		Tags(append([]string{"llmprobe"}, tags...)).Refresh("30s").Time("now-6h", "now").Timezone("browser").
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		WithVariable(datasourceVariable())
}

func withProbeVariables(b *dashboard.DashboardBuilder) *dashboard.DashboardBuilder {
	return b.WithVariable(labelVariable("target", "Target", "llmprobe_requests_total")).
		WithVariable(labelVariable("model", "Model", "llmprobe_requests_total")).
		WithVariable(labelVariable("scenario", "Scenario", "llmprobe_requests_total"))
}

func row(title string) *dashboard.RowBuilder { return dashboard.NewRowBuilder(title) }

// quantiles draws p50, p90 and p99 of a histogram metric.
func quantiles(metric, sel, by string) []Query {
	var out []Query
	for _, qt := range []struct{ q, name string }{{"0.5", "p50"}, {"0.9", "p90"}, {"0.99", "p99"}} {
		out = append(out, q(`histogram_quantile(`+qt.q+`, sum by (`+by+`, le) (rate(`+metric+`_bucket{`+sel+`}[$__rate_interval])))`,
			"{{target}} {{scenario}} "+qt.name))
	}
	return out
}

// All returns every dashboard by file name.
func All() (map[string]cog.Builder[dashboard.Dashboard], error) {
	return map[string]cog.Builder[dashboard.Dashboard]{
		"llmprobe-slo.json":      sloOverview(),
		"llmprobe-latency.json":  latency(),
		"llmprobe-bursts.json":   bursts(),
		"llmprobe-gpu.json":      gpu(),
		"llmprobe-upgrades.json": upgrades(),
	}, nil
}

func sloOverview() *dashboard.DashboardBuilder {
	errRatio := func(window string) string {
		return `sum by (target, scenario, objective) (increase(llmprobe_slo_checks_total{result="missed", ` + canarySel + `}[` + window + `]))
/
sum by (target, scenario, objective) (increase(llmprobe_slo_checks_total{` + canarySel + `}[` + window + `]))`
	}
	budgetLeft := `1 - ((` + errRatio("30d") + `) / on (scenario, objective) group_left () max by (scenario, objective) (1 - llmprobe_slo_target_ratio))`
	burn1h := `max by (target, scenario, objective) (llmprobe:slo_burn_rate:rate1h{traffic="canary", target=~"$target", scenario=~"$scenario"})`
	// 2 firing, 1 pending, 0 where the objective has no alert.
	alertState := `max by (target, scenario, objective) (2 * ALERTS{alertname=~"LLMProbeSLOBurn.*", alertstate="firing", target=~"$target", scenario=~"$scenario"} or ALERTS{alertname=~"LLMProbeSLOBurn.*", alertstate="pending", target=~"$target", scenario=~"$scenario"}) or 0 * ` + burn1h
	status := tablePanel("SLO status", "One row per target, scenario and objective (canary traffic): SLI over 1 hour and 30 days, the 30-day error budget left (1 untouched, 0 spent, below 0 overspent), the burn rate over the last hour (1 spends the budget exactly in 30 days; 14.4 pages) and the burn-rate alert's state.",
		column{"SLI 1h", "percentunit", q(`1 - (`+errRatio("1h")+`)`, "")},
		column{"SLI 30d", "percentunit", q(`1 - (`+errRatio("30d")+`)`, "")},
		column{"Error budget left (30d)", "percentunit", q(budgetLeft, "")},
		column{"Burn rate (1h)", "none", q(burn1h, "")},
		column{"Alert", "none", q(alertState, "")}).
		OverrideByName("Error budget left (30d)", []dashboard.DynamicConfigValue{
			{Id: "thresholds", Value: thresholdValue("red", from(0, "orange"), from(0.25, "green"))},
			{Id: "custom.cellOptions", Value: map[string]any{"type": "color-text"}}}).
		OverrideByName("Burn rate (1h)", []dashboard.DynamicConfigValue{
			{Id: "decimals", Value: 2},
			{Id: "thresholds", Value: thresholdValue("green", from(1, "orange"), from(14.4, "red"))},
			{Id: "custom.cellOptions", Value: map[string]any{"type": "color-text"}}}).
		OverrideByName("Alert", []dashboard.DynamicConfigValue{
			{Id: "mappings", Value: []dashboard.ValueMapping{{ValueMap: &dashboard.ValueMap{Type: dashboard.MappingTypeValueToText, Options: map[string]dashboard.ValueMappingResult{
				"0": valueText("green", "ok"), "1": valueText("orange", "pending"), "2": valueText("red", "firing")}}}}},
			{Id: "custom.cellOptions", Value: map[string]any{"type": "color-background"}}})
	b := withProbeVariables(base("llmprobe-slo", "llmprobe / SLO overview",
		"Each configured objective per target and scenario: status table, threshold, SLI over the SLO period, error budget left, burn rates, firing alerts and goodput.", "slo"))
	return b.
		WithRow(row("SLO status")).
		WithPanel(status).
		WithRow(row("Objectives")).
		WithPanel(plain(statPanel("Thresholds", "Configured threshold of each objective (llmprobe_slo_objective_seconds).", "s",
			q(`max by (scenario, objective) (llmprobe_slo_objective_seconds{scenario=~"$scenario"})`, "{{scenario}} {{objective}}")))).
		WithPanel(plain(statPanel("Target ratios", "Share of requests that must meet each objective (llmprobe_slo_target_ratio).", "percentunit",
			q(`max by (scenario, objective) (llmprobe_slo_target_ratio{scenario=~"$scenario"})`, "{{scenario}} {{objective}}")))).
		WithPanel(badWhenSet(statPanel("Firing llmprobe alerts", "Number of llmprobe alerts firing now; the alert list is in Grafana's alerting view.", "none",
			q(`count(ALERTS{alertname=~"LLMProbe.*", alertstate="firing"}) or vector(0)`, "firing")))).
		WithPanel(goodWhenSet(statPanel("Goodput vs target", "Share of canary requests that succeeded and met every objective, over the strictest configured target ratio: 100% or more meets it.", "percentunit",
			q(`(sum(rate(llmprobe_good_requests_total{`+canarySel+`}[$__rate_interval])) / sum(rate(llmprobe_requests_total{`+canarySel+`}[$__rate_interval]))) / scalar(max(llmprobe_slo_target_ratio{scenario=~"$scenario"}))`, "goodput")))).
		WithRow(row("SLI and error budget (30 days)")).
		WithPanel(timeSeries("SLI over 30 days", "Share of canary checks that met the objective over the last 30 days.", "percentunit",
			q(`1 - (`+errRatio("30d")+`)`, "{{target}} {{scenario}} {{objective}}"))).
		WithPanel(timeSeries("Error budget left", "1 - (error ratio over 30 days / (1 - target ratio)): 1 is untouched, 0 spent, below 0 overspent.", "percentunit",
			q(budgetLeft, "{{target}} {{scenario}} {{objective}}")).
			Thresholds(thresholds("red", from(0, "orange"), from(0.25, "green"))).ThresholdsStyle(common.NewGraphThresholdsStyleConfigBuilder().Mode(common.GraphThresholdsStyleModeLine))).
		WithRow(row("Burn rates")).
		WithPanel(burnPanel("Burn rate, short windows", "Error ratio over the budget's ratio, from the recording rules: 14.4 over 5m and 1h pages.", "5m", "1h")).
		WithPanel(burnPanel("Burn rate, long windows", "6 over 30m and 6h pages; 3 over 2h and 1d and 1 over 6h and 3d warn.", "6h", "3d")).
		WithRow(row("Goodput")).
		WithPanel(timeSeries("Good requests", "Requests per second that succeeded and met every objective.", "reqps",
			q(`sum by (target, scenario) (rate(llmprobe_good_requests_total{`+probeSel+`}[$__rate_interval]))`, "{{target}} {{scenario}}"))).
		WithPanel(timeSeries("Good output tokens", "Output tokens per second of good requests.", "tokens/s",
			q(`sum by (target, scenario) (rate(llmprobe_good_output_tokens_total{`+probeSel+`}[$__rate_interval]))`, "{{target}} {{scenario}}")))
}

// burnPanel draws two burn-rate windows with the paging (14.4) and
// warning (1) rates as threshold lines.
func burnPanel(title, description string, windows ...string) *timeseries.PanelBuilder {
	var qs []Query
	for _, w := range windows {
		qs = append(qs, q(`llmprobe:slo_burn_rate:rate`+w+`{traffic="canary", target=~"$target", scenario=~"$scenario"}`, w+" {{target}} {{scenario}} {{objective}}"))
	}
	return timeSeries(title, description, "none", qs...).
		Thresholds(thresholds("green", from(1, "orange"), from(14.4, "red"))).
		ThresholdsStyle(common.NewGraphThresholdsStyleConfigBuilder().Mode(common.GraphThresholdsStyleModeLine))
}

func latency() *dashboard.DashboardBuilder {
	b := withProbeVariables(base("llmprobe-latency", "llmprobe / Latency",
		"TTFT, ITL, TPOT and end-to-end latency as llmprobe measured them against the configured objectives, next to each engine family's own metrics where Prometheus scrapes them.", "latency"))
	b = b.
		WithRow(row("Client view (canary)")).
		WithPanel(withObjectiveStyle(timeSeries("Time to first token", "From when the request was due to its first output token; the dashed line is the scenario's TTFT objective.", "s",
			append(quantiles("llmprobe_time_to_first_token_seconds", canarySel, "target, scenario"), objectiveSeries("ttft"))...))).
		WithPanel(timeSeries("Inter-token latency", "Per token: a gap between chunks is split over the tokens the later chunk carried.", "s", quantiles("llmprobe_inter_token_latency_seconds", canarySel, "target, scenario")...)).
		WithPanel(withObjectiveStyle(timeSeries("Time per output token", "(E2E - TTFT) / (output tokens - 1) per request; the dashed line is the scenario's TPOT objective.", "s",
			append(quantiles("llmprobe_time_per_output_token_seconds", canarySel, "target, scenario"), objectiveSeries("tpot"))...))).
		WithPanel(withObjectiveStyle(timeSeries("End-to-end latency", "From when the request was due to the end of its stream; the dashed line is the scenario's E2E objective.", "s",
			append(quantiles("llmprobe_request_duration_seconds", canarySel, "target, scenario"), objectiveSeries("e2e"))...))).
		WithPanel(heatmapPanel("TTFT heatmap", "Distribution of canary TTFT over time.", "s",
			q(`sum by (le) (rate(llmprobe_time_to_first_token_seconds_bucket{`+canarySel+`}[$__rate_interval]))`, "{{le}}"))).
		WithPanel(heatmapPanel("ITL heatmap", "Distribution of canary inter-token latency over time.", "s",
			q(`sum by (le) (rate(llmprobe_inter_token_latency_seconds_bucket{`+canarySel+`}[$__rate_interval]))`, "{{le}}")))
	for _, e := range engineFamilies {
		b = b.WithRow(row("Engine: " + e.title))
		for _, p := range e.panels {
			b = b.WithPanel(p)
		}
	}
	return b.
		WithRow(row("Prober and outcomes")).
		WithPanel(timeSeries("Dispatch delay p99", "How late llmprobe sent requests after they were due; above 5 ms a burst describes the prober.", "s",
			q(`histogram_quantile(0.99, sum by (traffic, le) (rate(llmprobe_dispatch_delay_seconds_bucket{`+probeSel+`}[$__rate_interval])))`, "{{traffic}} p99"))).
		WithPanel(timeSeries("Outcomes", "Requests per second by outcome; rejects and errors miss every objective.", "reqps",
			q(`sum by (outcome) (rate(llmprobe_requests_total{`+probeSel+`}[$__rate_interval]))`, "{{outcome}}")))
}

// engineFamily is one engine's own metrics, for the targets whose
// llmprobe_target_info names that engine. The engine's scrape job must add a
// target label with llmprobe's target name (docs/dashboards.md).
type engineFamily struct {
	title  string
	panels []*timeseries.PanelBuilder
}

// ofEngine keeps the series of targets llmprobe identified as engine and
// that the dashboard's $target selects.
func ofEngine(expr, engine string) string {
	return expr + ` and on (target) llmprobe_target_info{engine="` + engine + `", target=~"$target"}`
}

var engineFamilies = []engineFamily{
	{"vLLM", []*timeseries.PanelBuilder{
		timeSeries("vLLM TTFT p99 vs llmprobe", "vLLM's TTFT histogram (from arrival at the server) next to llmprobe's (from when the request was due): the gap is network and admission.", "s",
			q(ofEngine(`histogram_quantile(0.99, sum by (target, le) (rate(vllm:time_to_first_token_seconds_bucket{target=~"$target"}[$__rate_interval])))`, "vllm"), "{{target}} engine p99"),
			q(ofEngine(`histogram_quantile(0.99, sum by (target, le) (rate(llmprobe_time_to_first_token_seconds_bucket{`+canarySel+`}[$__rate_interval])))`, "vllm"), "{{target}} llmprobe p99")),
		timeSeries("vLLM requests running and waiting", "vllm:num_requests_running and vllm:num_requests_waiting: waiting requests are queueing for a batch slot.", "short",
			q(ofEngine(`sum by (target) (vllm:num_requests_running{target=~"$target"})`, "vllm"), "{{target}} running"),
			q(ofEngine(`sum by (target) (vllm:num_requests_waiting{target=~"$target"})`, "vllm"), "{{target}} waiting")),
		timeSeries("vLLM KV cache usage", "vllm:kv_cache_usage_perc (1 is full): near 1 requests are preempted or wait.", "percentunit",
			q(ofEngine(`max by (target) (vllm:kv_cache_usage_perc{target=~"$target"})`, "vllm"), "{{target}}")),
	}},
	{"SGLang", []*timeseries.PanelBuilder{
		timeSeries("SGLang TTFT p99 vs llmprobe", "SGLang's TTFT histogram next to llmprobe's.", "s",
			q(ofEngine(`histogram_quantile(0.99, sum by (target, le) (rate(sglang:time_to_first_token_seconds_bucket{target=~"$target"}[$__rate_interval])))`, "sglang"), "{{target}} engine p99"),
			q(ofEngine(`histogram_quantile(0.99, sum by (target, le) (rate(llmprobe_time_to_first_token_seconds_bucket{`+canarySel+`}[$__rate_interval])))`, "sglang"), "{{target}} llmprobe p99")),
		timeSeries("SGLang requests running and queued", "sglang:num_running_reqs and sglang:num_queue_reqs.", "short",
			q(ofEngine(`sum by (target) (sglang:num_running_reqs{target=~"$target"})`, "sglang"), "{{target}} running"),
			q(ofEngine(`sum by (target) (sglang:num_queue_reqs{target=~"$target"})`, "sglang"), "{{target}} queued")),
		timeSeries("SGLang token usage", "sglang:token_usage: share of the KV token pool in use.", "percentunit",
			q(ofEngine(`max by (target) (sglang:token_usage{target=~"$target"})`, "sglang"), "{{target}}")),
	}},
	{"TGI", []*timeseries.PanelBuilder{
		timeSeries("TGI request duration p99 vs llmprobe", "TGI's request duration histogram (it has no TTFT histogram) next to llmprobe's end-to-end latency.", "s",
			q(ofEngine(`histogram_quantile(0.99, sum by (target, le) (rate(tgi_request_duration_bucket{target=~"$target"}[$__rate_interval])))`, "tgi"), "{{target}} engine p99"),
			q(ofEngine(`histogram_quantile(0.99, sum by (target, le) (rate(llmprobe_request_duration_seconds_bucket{`+canarySel+`}[$__rate_interval])))`, "tgi"), "{{target}} llmprobe p99")),
		timeSeries("TGI batch and queue", "tgi_batch_current_size (requests in the running batch) and tgi_queue_size (waiting).", "short",
			q(ofEngine(`sum by (target) (tgi_batch_current_size{target=~"$target"})`, "tgi"), "{{target}} batch"),
			q(ofEngine(`sum by (target) (tgi_queue_size{target=~"$target"})`, "tgi"), "{{target}} queue")),
		timeSeries("TGI queue time p99", "tgi_request_queue_duration: time a request waited before its first batch.", "s",
			q(ofEngine(`histogram_quantile(0.99, sum by (target, le) (rate(tgi_request_queue_duration_bucket{target=~"$target"}[$__rate_interval])))`, "tgi"), "{{target}} p99")),
	}},
	{"llama.cpp", []*timeseries.PanelBuilder{
		timeSeries("llama.cpp generation speed", "Tokens per second while predicting (llamacpp:tokens_predicted_total over llamacpp:tokens_predicted_seconds_total) and while reading prompts; llama.cpp exports no latency histogram.", "tokens/s",
			q(ofEngine(`sum by (target) (rate(llamacpp:tokens_predicted_total{target=~"$target"}[$__rate_interval])) / sum by (target) (rate(llamacpp:tokens_predicted_seconds_total{target=~"$target"}[$__rate_interval]))`, "llamacpp"), "{{target}} predicted"),
			q(ofEngine(`sum by (target) (rate(llamacpp:prompt_tokens_total{target=~"$target"}[$__rate_interval])) / sum by (target) (rate(llamacpp:prompt_seconds_total{target=~"$target"}[$__rate_interval]))`, "llamacpp"), "{{target}} prompt")),
		timeSeries("llama.cpp requests processing and deferred", "llamacpp:requests_processing (slots busy) and llamacpp:requests_deferred (waiting for a slot).", "short",
			q(ofEngine(`sum by (target) (llamacpp:requests_processing{target=~"$target"})`, "llamacpp"), "{{target}} processing"),
			q(ofEngine(`sum by (target) (llamacpp:requests_deferred{target=~"$target"})`, "llamacpp"), "{{target}} deferred")),
		timeSeries("llama.cpp tokens", "Output and prompt tokens per second the server processed.", "tokens/s",
			q(ofEngine(`sum by (target) (rate(llamacpp:tokens_predicted_total{target=~"$target"}[$__rate_interval]))`, "llamacpp"), "{{target}} output"),
			q(ofEngine(`sum by (target) (rate(llamacpp:prompt_tokens_total{target=~"$target"}[$__rate_interval]))`, "llamacpp"), "{{target}} prompt")),
	}},
}

func bursts() *dashboard.DashboardBuilder {
	sel := `burst=~"$burst"`
	verdicts := tablePanel("Last verdicts", "The last run of each burst: passed (1) every gate, aborted by the brake, client saturated, goodput ratio, p99 TTFT over the previous run's, when it ended. The burst name links to its HTML report on llmprobe ($llmprobe_url).",
		column{"Passed", "bool_yes_no", q(`llmprobe_burst_passed{`+sel+`}`, "")},
		column{"Aborted", "bool_yes_no", q(`llmprobe_burst_aborted{`+sel+`}`, "")},
		column{"Client saturated", "bool_yes_no", q(`llmprobe_burst_client_saturated{`+sel+`}`, "")},
		column{"Goodput ratio", "percentunit", q(`llmprobe_burst_goodput_ratio{`+sel+`}`, "")},
		column{"TTFT p99 vs previous", "none", q(`llmprobe_burst_regression_ratio{`+sel+`, metric="ttft_p99"}`, "")},
		column{"Ended", "dateTimeFromNow", q(`llmprobe_burst_last_run_timestamp_seconds{`+sel+`} * 1000`, "")}).
		OverrideByName("burst", []dashboard.DynamicConfigValue{{Id: "links", Value: []map[string]any{{
			"title": "HTML report of ${__data.fields.burst}", "url": "${llmprobe_url}/bursts/latest?burst=${__data.fields.burst}", "targetBlank": true}}}}).
		OverrideByName("Passed", []dashboard.DynamicConfigValue{
			{Id: "thresholds", Value: thresholdValue("red", from(1, "green"))},
			{Id: "custom.cellOptions", Value: map[string]any{"type": "color-background"}}}).
		OverrideByName("Aborted", []dashboard.DynamicConfigValue{
			{Id: "thresholds", Value: thresholdValue("green", from(1, "red"))},
			{Id: "custom.cellOptions", Value: map[string]any{"type": "color-background"}}}).
		OverrideByName("Client saturated", []dashboard.DynamicConfigValue{
			{Id: "thresholds", Value: thresholdValue("green", from(1, "orange"))},
			{Id: "custom.cellOptions", Value: map[string]any{"type": "color-background"}}})
	return base("llmprobe-bursts", "llmprobe / Bursts",
		"The last run of each scheduled burst: verdicts with links to their reports, percentiles, achieved rate, goodput, gates, regression against the previous run, sweep result.", "bursts").
		WithVariable(labelVariable("burst", "Burst", "llmprobe_burst_passed")).
		WithVariable(dashboard.NewTextBoxVariableBuilder("llmprobe_url").Label("llmprobe URL").DefaultValue(dashboard.StringOrMap{String: ptr("http://localhost:9479")}).
			Description("Where your browser reaches llmprobe's pages: the burst links open its HTML reports.")).
		WithRow(row("Verdict")).
		WithPanel(verdicts).
		WithPanel(goodWhenSet(statPanel("Passed", "1 when the last run passed every gate.", "bool_yes_no", q(`llmprobe_burst_passed{`+sel+`}`, "{{burst}}")))).
		WithPanel(badWhenSet(statPanel("Client saturated", "1 when dispatch delay p99 passed 5 ms: the run measured the prober.", "bool_yes_no", q(`llmprobe_burst_client_saturated{`+sel+`}`, "{{burst}}")))).
		WithPanel(badWhenSet(statPanel("Aborted", "1 when the safety brake stopped the run.", "bool_yes_no", q(`llmprobe_burst_aborted{`+sel+`}`, "{{burst}}")))).
		WithPanel(plain(statPanel("Max rate under SLO", "From a sweep: the highest rate whose goodput ratio met the target.", "reqps", q(`llmprobe_burst_max_rate_under_slo{`+sel+`}`, "{{burst}}")))).
		WithRow(row("Last run")).
		WithPanel(timeSeries("Latency quantiles", "Exact p50 and p99 of the last run, per metric.", "s",
			q(`llmprobe_burst_latency_seconds{`+sel+`, percentile=~"p50|p99", metric=~"ttft|tpot|itl|e2e"}`, "{{burst}} {{metric}} {{percentile}}"))).
		WithPanel(timeSeries("Achieved rate", "Requests per second the last run sent.", "reqps",
			q(`llmprobe_burst_achieved_rate{`+sel+`}`, "{{burst}}"))).
		WithPanel(timeSeries("Output throughput", "Output tokens per second of the last run.", "tokens/s",
			q(`llmprobe_burst_output_tokens_per_second{`+sel+`}`, "{{burst}}"))).
		WithPanel(timeSeries("Goodput ratio", "Share of the last run's requests that were good.", "percentunit", q(`llmprobe_burst_goodput_ratio{`+sel+`}`, "{{burst}}"))).
		WithPanel(timeSeries("Regression ratios", "The last run's quantile over the previous run's; above 1 is slower.", "none",
			q(`llmprobe_burst_regression_ratio{`+sel+`, metric=~"ttft_p99|tpot_p99|e2e_p99"}`, "{{burst}} {{metric}}")).
			Thresholds(thresholds("green", from(1.1, "orange"), from(1.25, "red"))).ThresholdsStyle(common.NewGraphThresholdsStyleConfigBuilder().Mode(common.GraphThresholdsStyleModeLine))).
		WithPanel(timeSeries("Last run", "When each burst last ended.", "dateTimeFromNow", q(`llmprobe_burst_last_run_timestamp_seconds{`+sel+`} * 1000`, "{{burst}}")))
}

func gpu() *dashboard.DashboardBuilder {
	g := `gpu=~"$gpu", instance=~"$instance"`
	return base("llmprobe-gpu", "llmprobe / GPU",
		"The GPUs of the nodes llmprobe runs on (NVML): utilization, memory, power, temperature, clocks, throttling, energy per output token, XID and ECC.", "gpu").
		WithVariable(labelVariable("instance", "Node", "llmprobe_gpu_info")).
		WithVariable(labelVariable("gpu", "GPU", "llmprobe_gpu_info")).
		WithPanel(goodWhenSet(statPanel("GPU collector", "1 when the last NVML scrape worked; 0 where no GPU or driver is present.", "bool_yes_no",
			q(`llmprobe_collector_success{collector="gpu"}`, "{{instance}}")))).
		WithPanel(timeSeries("Utilization", "Share of time a kernel ran.", "percentunit", q(`llmprobe_gpu_utilization_ratio{`+g+`}`, "{{instance}} GPU {{gpu}}"))).
		WithPanel(timeSeries("Memory used", "Device memory in use against the total.", "bytes",
			q(`llmprobe_gpu_memory_used_bytes{`+g+`}`, "{{instance}} GPU {{gpu}} used"), q(`llmprobe_gpu_memory_total_bytes{`+g+`}`, "{{instance}} GPU {{gpu}} total"))).
		WithPanel(timeSeries("Power", "Power draw and the enforced limit.", "watt",
			q(`llmprobe_gpu_power_watts{`+g+`}`, "{{instance}} GPU {{gpu}}"), q(`llmprobe_gpu_power_limit_watts{`+g+`}`, "{{instance}} GPU {{gpu}} limit"))).
		WithPanel(timeSeries("Temperature", "GPU temperature.", "celsius", q(`llmprobe_gpu_temperature_celsius{`+g+`}`, "{{instance}} GPU {{gpu}} {{sensor}}"))).
		WithPanel(timeSeries("Clocks", "SM and memory clocks.", "hertz", q(`llmprobe_gpu_clock_hz{`+g+`}`, "{{instance}} GPU {{gpu}} {{clock}}"))).
		WithPanel(timeSeries("Throttle reasons", "Active clocks event reasons (idle excluded).", "short",
			q(`llmprobe_gpu_clocks_event_reason_active{`+g+`, reason!="gpu_idle"} == 1`, "{{instance}} GPU {{gpu}} {{reason}}"))).
		WithPanel(timeSeries("Energy per output token", "GPU energy over the last burst's output tokens, where llmprobe runs on the GPU node.", "joule",
			q(`llmprobe_burst_energy_joules_per_output_token`, "{{burst}}"))).
		WithPanel(timeSeries("XID and ECC errors", "XID errors and uncorrected ECC errors in the range.", "short",
			q(`sum by (instance, gpu, xid) (increase(llmprobe_gpu_xid_errors_total{`+g+`}[$__rate_interval]))`, "{{instance}} GPU {{gpu}} XID {{xid}}"),
			q(`sum by (instance, gpu) (increase(llmprobe_gpu_ecc_errors_total{`+g+`, type="uncorrected"}[$__rate_interval]))`, "{{instance}} GPU {{gpu}} uncorrected ECC")))
}

func upgrades() *dashboard.DashboardBuilder {
	return base("llmprobe-upgrades", "llmprobe / Engine upgrades",
		"Engine version of each target over time, and canary p99 latency by version: the regression the hour after an upgrade.", "upgrades").
		WithVariable(labelVariable("target", "Target", "llmprobe_target_info")).
		Annotation(dashboard.NewAnnotationQueryBuilder().Name("Engine versions").Enable(true).IconColor("orange").Datasource(datasource).
			Expr(`changes(max by (target, engine_version) (llmprobe_target_info{target=~"$target"})[$__rate_interval:]) > 0 or (count by (target, engine_version) (llmprobe_target_info{target=~"$target"}) unless count by (target, engine_version) (llmprobe_target_info{target=~"$target"} offset 5m))`).
			TitleFormat("{{target}} runs {{engine_version}}")).
		WithPanel(timeSeries("Engine version per target", "One line per version a target reported (/version, Server header).", "short",
			q(`count by (target, engine, engine_version) (llmprobe_target_info{target=~"$target"})`, "{{target}} {{engine}} {{engine_version}}"))).
		WithPanel(timeSeries("p99 TTFT by engine version", "Canary p99 TTFT, labelled with the engine version the target reported.", "s",
			q(`histogram_quantile(0.99, sum by (target, le) (rate(llmprobe_time_to_first_token_seconds_bucket{traffic="canary", target=~"$target"}[$__rate_interval]))) * on (target) group_left (engine_version) max by (target, engine_version) (llmprobe_target_info{target=~"$target"})`, "{{target}} {{engine_version}}"))).
		WithPanel(timeSeries("p99 TPOT by engine version", "Canary p99 TPOT, labelled with the engine version.", "s",
			q(`histogram_quantile(0.99, sum by (target, le) (rate(llmprobe_time_per_output_token_seconds_bucket{traffic="canary", target=~"$target"}[$__rate_interval]))) * on (target) group_left (engine_version) max by (target, engine_version) (llmprobe_target_info{target=~"$target"})`, "{{target}} {{engine_version}}"))).
		WithPanel(timeSeries("p99 TTFT over 1h", "The recording rule the upgrade-regression alert compares with a day earlier.", "s",
			q(`llmprobe:ttft_p99:rate1h{target=~"$target"}`, "{{target}}")))
}
