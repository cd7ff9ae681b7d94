package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// reportLink opens the newest HTML report of a table row's burst on llmprobe.
const reportLink = "${llmprobe_url}/bursts/latest?burst=${__data.fields.burst:percentencode}"

func llmprobeURLVariable() *dashboard.TextBoxVariableBuilder {
	return dashboard.NewTextBoxVariableBuilder("llmprobe_url").Label("llmprobe URL").
		Description("Where llmprobe's pages answer, for the links to burst reports.").
		DefaultValue(dashboard.StringOrMap{String: ptr("http://localhost:9479")}).
		Current(dashboard.VariableOption{Text: dashboard.StringOrArrayOfString{String: ptr("http://localhost:9479")}, Value: dashboard.StringOrArrayOfString{String: ptr("http://localhost:9479")}})
}

func bursts() *dashboard.DashboardBuilder {
	sel := `burst=~"$burst"`
	last := func(metric string) string { return `max by (burst) (` + metric + `{` + sel + `})` }
	flag := func(one, oneColor, zero, zeroColor string) []dashboard.ValueMapping {
		return []dashboard.ValueMapping{texts([3]string{"1", one, oneColor}, [3]string{"0", zero, zeroColor})}
	}
	verdicts := tablePanel("Last verdicts", "The last run of each burst: its gates, whether the safety brake stopped it, whether the prober saturated and its measurement error bound (how much of each latency llmprobe itself may have added), goodput and the worst regression against the previous run. The burst name links to its HTML report on llmprobe (set the llmprobe URL variable).",
		[]string{"burst"},
		column{name: "Passed", unit: unitNone, expr: last("llmprobe_burst_passed"), th: goodWhenOne(), mappings: flag("passed", "green", "failed", "red")},
		column{name: "Aborted", unit: unitNone, expr: last("llmprobe_burst_aborted"), th: badWhenOne(), mappings: flag("aborted", "red", "no", "green")},
		column{name: "Client saturated", unit: unitNone, expr: last("llmprobe_burst_client_saturated"), th: badWhenOne(), mappings: flag("saturated", "red", "no", "green")},
		column{name: "Error bound p99", unit: unitSeconds, expr: `max by (burst) (llmprobe_burst_measurement_error_bound_seconds{` + sel + `, percentile="p99"})`},
		column{name: "Goodput", unit: unitRatio, expr: last("llmprobe_burst_goodput_ratio")},
		column{name: "Worst regression", unit: unitNone, expr: last("llmprobe_burst_regression_ratio"), th: levels("green", level{1.1, "red"})},
		column{name: "Ended", unit: "dateTimeFromNow", expr: last("llmprobe_burst_last_run_timestamp_seconds") + ` * 1000`},
	).OverrideByName("burst", []dashboard.DynamicConfigValue{{Id: "links", Value: []map[string]any{{
		"title": "HTML report of the last run", "url": reportLink, "targetBlank": true,
	}}}})
	return base("llmprobe-bursts", "llmprobe / Bursts",
		"The last run of each scheduled burst: verdicts with links to their reports, percentiles, achieved rate, goodput, regression against the previous run, sweep result.", "bursts").
		WithVariable(labelVariable("burst", "Burst", "llmprobe_burst_passed")).
		WithVariable(llmprobeURLVariable()).
		WithRow(row("Verdicts")).
		WithPanel(verdicts).
		WithPanel(statPanel("Passed", "1 when the last run passed every gate.", unitYesNo, goodWhenOne(), q(`llmprobe_burst_passed{`+sel+`}`, "{{burst}}"))).
		WithPanel(statPanel("Client saturated", "1 when the measurement error bound p99 (dispatch delay + scheduling latency + GC pauses + self-probe read delay) passed a tenth of the burst's tightest objective: the run measured the prober.", unitYesNo, badWhenOne(), q(`llmprobe_burst_client_saturated{`+sel+`}`, "{{burst}}"))).
		WithPanel(statPanel("Aborted", "1 when the safety brake stopped the run.", unitYesNo, badWhenOne(), q(`llmprobe_burst_aborted{`+sel+`}`, "{{burst}}"))).
		WithPanel(statPanel("Max rate under SLO", "From a sweep: the highest rate whose goodput ratio met the target.", unitReqPerSec, neutral(), q(`llmprobe_burst_max_rate_under_slo{`+sel+`}`, "{{burst}}"))).
		WithRow(row("Last run")).
		WithPanel(timeSeries("Latency quantiles", "Exact p50 and p99 of the last run, per metric.", unitSeconds,
			q(`llmprobe_burst_latency_seconds{`+sel+`, percentile=~"p50|p99", metric=~"ttft|tpot|itl|e2e"}`, "{{burst}} {{metric}} {{percentile}}"))).
		WithPanel(timeSeries("Achieved rate", "Requests per second the last run actually sent.", unitReqPerSec,
			q(`llmprobe_burst_achieved_rate{`+sel+`}`, "{{burst}}")).Span(6)).
		WithPanel(timeSeries("Output throughput", "Output tokens per second of the last run.", unitTokPerSec,
			q(`llmprobe_burst_output_tokens_per_second{`+sel+`}`, "{{burst}}")).Span(6)).
		WithPanel(timeSeries("Goodput ratio", "Share of the last run's requests that were good.", unitRatio, q(`llmprobe_burst_goodput_ratio{`+sel+`}`, "{{burst}}"))).
		WithPanel(timeSeries("Regression ratios", "The last run's quantile over the previous run's; above 1 is slower.", unitNone,
			q(`llmprobe_burst_regression_ratio{`+sel+`, metric=~"ttft_p99|tpot_p99|e2e_p99"}`, "{{burst}} {{metric}}")).
			Thresholds(levels("green", level{1, "red"})).ThresholdsStyle(thresholdLines())).
		WithPanel(statPanel("Last run ended", "When each burst last ended.", "dateTimeFromNow", neutral(),
			q(`llmprobe_burst_last_run_timestamp_seconds{`+sel+`} * 1000`, "{{burst}}")))
}

func gpu() *dashboard.DashboardBuilder {
	g := `gpu=~"$gpu", instance=~"$instance"`
	return base("llmprobe-gpu", "llmprobe / GPU",
		"The GPUs of the nodes llmprobe runs on (NVML): utilization, memory, power, temperature, clocks, throttling, PCIe, energy per output token, XID and ECC.", "gpu").
		WithVariable(labelVariable("instance", "Node", "llmprobe_gpu_info")).
		WithVariable(labelVariable("gpu", "GPU", "llmprobe_gpu_info")).
		WithPanel(statPanel("GPU collector", "1 when the last NVML scrape worked; 0 where no GPU or driver is present.", unitYesNo, goodWhenOne(),
			q(`llmprobe_collector_success{collector="gpu"}`, "{{instance}}"))).
		WithPanel(timeSeries("Utilization", "Share of time a kernel ran, and share of time memory was read or written.", unitRatio,
			q(`llmprobe_gpu_utilization_ratio{`+g+`}`, "{{instance}} GPU {{gpu}}"),
			q(`llmprobe_gpu_memory_utilization_ratio{`+g+`}`, "{{instance}} GPU {{gpu}} memory"))).
		WithPanel(timeSeries("Memory used", "Device memory in use against the total.", "bytes",
			q(`llmprobe_gpu_memory_used_bytes{`+g+`}`, "{{instance}} GPU {{gpu}} used"), q(`llmprobe_gpu_memory_total_bytes{`+g+`}`, "{{instance}} GPU {{gpu}} total"))).
		WithPanel(timeSeries("Power", "Power draw and the enforced limit.", "watt",
			q(`llmprobe_gpu_power_watts{`+g+`}`, "{{instance}} GPU {{gpu}}"), q(`llmprobe_gpu_power_limit_watts{`+g+`}`, "{{instance}} GPU {{gpu}} limit"))).
		WithPanel(timeSeries("Temperature", "GPU temperature.", "celsius", q(`llmprobe_gpu_temperature_celsius{`+g+`}`, "{{instance}} GPU {{gpu}} {{sensor}}"))).
		WithPanel(timeSeries("Clocks", "SM, memory and graphics clocks.", "hertz", q(`llmprobe_gpu_clock_hz{`+g+`}`, "{{instance}} GPU {{gpu}} {{clock}}"))).
		WithPanel(timeSeries("Throttle reasons", "Active clocks event reasons (idle excluded).", "bool_on_off",
			q(`llmprobe_gpu_clocks_event_reason_active{`+g+`, reason!="gpu_idle"} == 1`, "{{instance}} GPU {{gpu}} {{reason}}"))).
		WithPanel(timeSeries("PCIe throughput", "Bytes per second over PCIe, by direction.", "Bps",
			q(`llmprobe_gpu_pcie_throughput_bytes_per_second{`+g+`}`, "{{instance}} GPU {{gpu}} {{direction}}"))).
		WithPanel(timeSeries("Energy per output token", "GPU energy over the last burst's output tokens, where llmprobe runs on the GPU node.", "joule",
			q(`llmprobe_burst_energy_joules_per_output_token`, "{{burst}}"))).
		WithPanel(timeSeries("XID and ECC errors", "XID errors and uncorrected ECC errors in the range.", unitCount,
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
		WithPanel(timeSeries("Engine version per target", "One line per version a target reported (/version, Server header).", unitCount,
			q(`count by (target, engine, engine_version) (llmprobe_target_info{target=~"$target"})`, "{{target}} {{engine}} {{engine_version}}"))).
		WithPanel(timeSeries("p99 TTFT by engine version", "Canary p99 TTFT, labelled with the engine version the target reported.", unitSeconds,
			withExemplars(q(quantile("0.99", "llmprobe_time_to_first_token_seconds", `traffic="canary", target=~"$target"`, "target")+` * on (target) group_left (engine_version) max by (target, engine_version) (llmprobe_target_info{target=~"$target"})`, "{{target}} {{engine_version}}")))).
		WithPanel(timeSeries("p99 TPOT by engine version", "Canary p99 TPOT, labelled with the engine version.", unitSeconds,
			withExemplars(q(quantile("0.99", "llmprobe_time_per_output_token_seconds", `traffic="canary", target=~"$target"`, "target")+` * on (target) group_left (engine_version) max by (target, engine_version) (llmprobe_target_info{target=~"$target"})`, "{{target}} {{engine_version}}")))).
		WithPanel(timeSeries("p99 TTFT over 1h", "The recording rule the canary upgrade-regression alert compares with a day earlier.", unitSeconds,
			q(`llmprobe:ttft_p99:rate1h{target=~"$target"}`, "{{target}}"))).
		WithRow(row("Upgrade bursts")).
		WithPanel(timeSeries("Upgrade regression", "The verdict of each upgrade burst's last run (schedule on_engine_change), per quantile: 1 when it grew past the burst's max_increase over the last report from before the engine change and the Mann-Whitney test says the change is real; 0 when not. What LLMProbeUpgradeRegression fires on.", unitYesNo,
			q(upgradeVerdict("llmprobe_burst_upgrade_regression"), "{{burst}} {{metric}} {{from_version}} → {{to_version}}")).
			Thresholds(badWhenOne()).ThresholdsStyle(thresholdLines())).
		WithPanel(timeSeries("Upgrade change", "Each upgrade burst's last run's quantile over the one from before the engine change; above 1 is slower.", unitNone,
			q(upgradeVerdict("llmprobe_burst_upgrade_ratio"), "{{burst}} {{metric}} {{from_version}} → {{to_version}}")).
			Thresholds(levels("green", level{1, "red"})).ThresholdsStyle(thresholdLines()))
}

// upgradeVerdict labels an upgrade burst's series with its target and the
// versions it went from and to.
func upgradeVerdict(metric string) string {
	return `max by (burst, metric) (` + metric + `{burst=~".+"}) * on (burst) group_left (target, from_version, to_version) ` +
		`topk by (burst) (1, max by (burst, target, from_version, to_version) (llmprobe_burst_upgrade_info{target=~"$target"}))`
}
