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
	b := withProbeVariables(base("llmprobe-slo", "llmprobe / SLO overview",
		"Each configured objective per target and scenario: threshold, SLI over the SLO period, error budget left, burn rates, firing alerts and goodput.", "slo"))
	return b.
		WithRow(row("Objectives")).
		WithPanel(statPanel("Thresholds", "Configured threshold of each objective (llmprobe_slo_objective_seconds).", "s",
			q(`max by (scenario, objective) (llmprobe_slo_objective_seconds{scenario=~"$scenario"})`, "{{scenario}} {{objective}}"))).
		WithPanel(statPanel("Target ratios", "Share of requests that must meet each objective (llmprobe_slo_target_ratio).", "percentunit",
			q(`max by (scenario, objective) (llmprobe_slo_target_ratio{scenario=~"$scenario"})`, "{{scenario}} {{objective}}"))).
		WithPanel(statPanel("Firing llmprobe alerts", "Number of llmprobe alerts firing now; the alert list is in Grafana's alerting view.", "none",
			q(`count(ALERTS{alertname=~"LLMProbe.*", alertstate="firing"}) or vector(0)`, "firing"))).
		WithPanel(statPanel("Goodput ratio", "Share of canary requests that succeeded and met every objective.", "percentunit",
			q(`sum(rate(llmprobe_good_requests_total{`+canarySel+`}[$__rate_interval])) / sum(rate(llmprobe_requests_total{`+canarySel+`}[$__rate_interval]))`, "goodput"))).
		WithRow(row("SLI and error budget (30 days)")).
		WithPanel(timeSeries("SLI over 30 days", "Share of canary checks that met the objective over the last 30 days.", "percentunit",
			q(`1 - (`+errRatio("30d")+`)`, "{{target}} {{scenario}} {{objective}}"))).
		WithPanel(timeSeries("Error budget left", "1 - (error ratio over 30 days / (1 - target ratio)): 1 is untouched, 0 spent, below 0 overspent.", "percentunit",
			q(`1 - ((`+errRatio("30d")+`) / on (scenario, objective) group_left () max by (scenario, objective) (1 - llmprobe_slo_target_ratio))`, "{{target}} {{scenario}} {{objective}}"))).
		WithRow(row("Burn rates")).
		WithPanel(timeSeries("Burn rate, short windows", "Error ratio over the budget's ratio, from the recording rules: 14.4 over 5m and 1h pages.", "none",
			q(`llmprobe:slo_burn_rate:rate5m{traffic="canary", target=~"$target", scenario=~"$scenario"}`, "5m {{target}} {{scenario}} {{objective}}"),
			q(`llmprobe:slo_burn_rate:rate1h{traffic="canary", target=~"$target", scenario=~"$scenario"}`, "1h {{target}} {{scenario}} {{objective}}"))).
		WithPanel(timeSeries("Burn rate, long windows", "6 over 30m and 6h pages; 3 over 2h and 1d and 1 over 6h and 3d warn.", "none",
			q(`llmprobe:slo_burn_rate:rate6h{traffic="canary", target=~"$target", scenario=~"$scenario"}`, "6h {{target}} {{scenario}} {{objective}}"),
			q(`llmprobe:slo_burn_rate:rate3d{traffic="canary", target=~"$target", scenario=~"$scenario"}`, "3d {{target}} {{scenario}} {{objective}}"))).
		WithRow(row("Goodput")).
		WithPanel(timeSeries("Good requests", "Requests per second that succeeded and met every objective.", "reqps",
			q(`sum by (target, scenario) (rate(llmprobe_good_requests_total{`+probeSel+`}[$__rate_interval]))`, "{{target}} {{scenario}}"))).
		WithPanel(timeSeries("Good output tokens", "Output tokens per second of good requests.", "short",
			q(`sum by (target, scenario) (rate(llmprobe_good_output_tokens_total{`+probeSel+`}[$__rate_interval]))`, "{{target}} {{scenario}}")))
}

func latency() *dashboard.DashboardBuilder {
	b := withProbeVariables(base("llmprobe-latency", "llmprobe / Latency",
		"TTFT, ITL, TPOT and end-to-end latency as llmprobe measured them, next to the engine's own histograms where Prometheus scrapes them.", "latency"))
	return b.
		WithRow(row("Client view (canary)")).
		WithPanel(timeSeries("Time to first token", "From when the request was due to its first output token.", "s", quantiles("llmprobe_time_to_first_token_seconds", canarySel, "target, scenario")...)).
		WithPanel(timeSeries("Inter-token latency", "Per token: a gap between chunks is split over the tokens the later chunk carried.", "s", quantiles("llmprobe_inter_token_latency_seconds", canarySel, "target, scenario")...)).
		WithPanel(timeSeries("Time per output token", "(E2E - TTFT) / (output tokens - 1) per request.", "s", quantiles("llmprobe_time_per_output_token_seconds", canarySel, "target, scenario")...)).
		WithPanel(timeSeries("End-to-end latency", "From when the request was due to the end of its stream.", "s", quantiles("llmprobe_request_duration_seconds", canarySel, "target, scenario")...)).
		WithPanel(heatmapPanel("TTFT heatmap", "Distribution of canary TTFT over time.", "s",
			q(`sum by (le) (rate(llmprobe_time_to_first_token_seconds_bucket{`+canarySel+`}[$__rate_interval]))`, "{{le}}"))).
		WithPanel(heatmapPanel("ITL heatmap", "Distribution of canary inter-token latency over time.", "s",
			q(`sum by (le) (rate(llmprobe_inter_token_latency_seconds_bucket{`+canarySel+`}[$__rate_interval]))`, "{{le}}"))).
		WithRow(row("Engine view")).
		WithPanel(timeSeries("Engine TTFT p99 vs llmprobe", "vLLM's own TTFT histogram (from arrival at the server) next to llmprobe's (from when the request was due).", "s",
			q(`histogram_quantile(0.99, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket[$__rate_interval])))`, "engine p99"),
			q(`histogram_quantile(0.99, sum by (le) (rate(llmprobe_time_to_first_token_seconds_bucket{`+canarySel+`}[$__rate_interval])))`, "llmprobe p99"))).
		WithPanel(timeSeries("Engine queue", "Requests running and waiting in the engine (vLLM names).", "short",
			q(`sum(vllm:num_requests_running)`, "running"), q(`sum(vllm:num_requests_waiting)`, "waiting"))).
		WithRow(row("Prober and outcomes")).
		WithPanel(timeSeries("Dispatch delay p99", "How late llmprobe sent requests after they were due; above 5 ms a burst describes the prober.", "s",
			q(`histogram_quantile(0.99, sum by (traffic, le) (rate(llmprobe_dispatch_delay_seconds_bucket{`+probeSel+`}[$__rate_interval])))`, "{{traffic}} p99"))).
		WithPanel(timeSeries("Outcomes", "Requests per second by outcome; rejects and errors miss every objective.", "reqps",
			q(`sum by (outcome) (rate(llmprobe_requests_total{`+probeSel+`}[$__rate_interval]))`, "{{outcome}}")))
}

func bursts() *dashboard.DashboardBuilder {
	sel := `burst=~"$burst"`
	return base("llmprobe-bursts", "llmprobe / Bursts",
		"The last run of each scheduled burst: percentiles, achieved rate, goodput, gates, regression against the previous run, sweep result.", "bursts").
		WithVariable(labelVariable("burst", "Burst", "llmprobe_burst_passed")).
		WithRow(row("Verdict")).
		WithPanel(statPanel("Passed", "1 when the last run passed every gate.", "bool_yes_no", q(`llmprobe_burst_passed{`+sel+`}`, "{{burst}}"))).
		WithPanel(statPanel("Client saturated", "1 when dispatch delay p99 passed 5 ms: the run measured the prober.", "bool_yes_no", q(`llmprobe_burst_client_saturated{`+sel+`}`, "{{burst}}"))).
		WithPanel(statPanel("Aborted", "1 when the safety brake stopped the run.", "bool_yes_no", q(`llmprobe_burst_aborted{`+sel+`}`, "{{burst}}"))).
		WithPanel(statPanel("Max rate under SLO", "From a sweep: the highest rate whose goodput ratio met the target.", "reqps", q(`llmprobe_burst_max_rate_under_slo{`+sel+`}`, "{{burst}}"))).
		WithRow(row("Last run")).
		WithPanel(timeSeries("Latency quantiles", "Exact p50 and p99 of the last run, per metric.", "s",
			q(`llmprobe_burst_latency_seconds{`+sel+`, percentile=~"p50|p99", metric=~"ttft|tpot|itl|e2e"}`, "{{burst}} {{metric}} {{percentile}}"))).
		WithPanel(timeSeries("Achieved rate and throughput", "Requests per second sent, and output tokens per second.", "reqps",
			q(`llmprobe_burst_achieved_rate{`+sel+`}`, "{{burst}} requests/s"), q(`llmprobe_burst_output_tokens_per_second{`+sel+`}`, "{{burst}} output tokens/s"))).
		WithPanel(timeSeries("Goodput ratio", "Share of the last run's requests that were good.", "percentunit", q(`llmprobe_burst_goodput_ratio{`+sel+`}`, "{{burst}}"))).
		WithPanel(timeSeries("Regression ratios", "The last run's quantile over the previous run's; above 1 is slower.", "none",
			q(`llmprobe_burst_regression_ratio{`+sel+`, metric=~"ttft_p99|tpot_p99|e2e_p99"}`, "{{burst}} {{metric}}"))).
		WithPanel(timeSeries("Last run", "When each burst last ended.", "dateTimeFromNow", q(`llmprobe_burst_last_run_timestamp_seconds{`+sel+`} * 1000`, "{{burst}}")))
}

func gpu() *dashboard.DashboardBuilder {
	g := `gpu=~"$gpu", instance=~"$instance"`
	return base("llmprobe-gpu", "llmprobe / GPU",
		"The GPUs of the nodes llmprobe runs on (NVML): utilization, memory, power, temperature, clocks, throttling, energy per output token, XID and ECC.", "gpu").
		WithVariable(labelVariable("instance", "Node", "llmprobe_gpu_info")).
		WithVariable(labelVariable("gpu", "GPU", "llmprobe_gpu_info")).
		WithPanel(statPanel("GPU collector", "1 when the last NVML scrape worked; 0 where no GPU or driver is present.", "bool_yes_no",
			q(`llmprobe_collector_success{collector="gpu"}`, "{{instance}}"))).
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
