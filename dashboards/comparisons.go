package dashboards

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

// withComparisons adds the always-on comparisons' row: each comparison's
// decision and its metrics' (what the alert and rollouts act on), each
// candidate's ratio to its baseline with its interval, and the pairs and
// epochs the figures rest on.
func withComparisons(b *dashboard.DashboardBuilder) *dashboard.DashboardBuilder {
	const by = `comparison, scenario, metric, percentile`
	return b.WithRow(row("Canary analysis")).
		WithPanel(timeSeries("Comparison decision", "Each always-on comparison's decision per scenario, and each metric's: 1 pass (the median shown within the tolerance), 0 undecided, -1 fail (shown beyond it). Valid at every read; held until the epoch starts afresh (every window, or when a side's engine, version, model or server changes). LLMProbeComparisonWorse fires on a metric's -1.", unitNone,
			q(`min by (comparison, scenario) (llmprobe_comparison_decision)`, "{{comparison}} {{scenario}}"),
			q(`min by (comparison, scenario, metric) (llmprobe_comparison_metric_decision)`, "{{comparison}} {{scenario}} {{metric}}")).
			Thresholds(levels("red", level{0, "yellow"}, level{1, "green"})).ThresholdsStyle(thresholdLines())).
		WithPanel(timeSeries("Comparison ratio at p50", "The candidate's median over the baseline's (paired: the same prompt to both at the same moment), with its confidence sequence: the interval the decision reads, valid at every read; above 1 is slower.", unitNone,
			q(`max by (`+by+`) (llmprobe_comparison_ratio{percentile="p50"})`, "{{comparison}} {{scenario}} {{metric}}"),
			q(`max by (`+by+`) (llmprobe_comparison_ratio_lower{percentile="p50"})`, "{{comparison}} {{scenario}} {{metric}} lower"),
			q(`max by (`+by+`) (llmprobe_comparison_ratio_upper{percentile="p50"})`, "{{comparison}} {{scenario}} {{metric}} upper")).
			Thresholds(levels("green", level{1, "red"})).ThresholdsStyle(thresholdLines())).
		WithPanel(timeSeries("Comparison ratio at p90 and p99", "The ratio of the candidate's p90 and p99 to the baseline's, with the paired bootstrap's 95 % interval: from 36 and 368 pairs in the epoch (fewer say nothing about a tail). For people: they decide nothing.", unitNone,
			q(`max by (`+by+`) (llmprobe_comparison_ratio{percentile!="p50"})`, "{{comparison}} {{scenario}} {{metric}} {{percentile}}"),
			q(`max by (`+by+`) (llmprobe_comparison_ratio_lower{percentile!="p50"})`, "{{comparison}} {{scenario}} {{metric}} {{percentile}} lower"),
			q(`max by (`+by+`) (llmprobe_comparison_ratio_upper{percentile!="p50"})`, "{{comparison}} {{scenario}} {{metric}} {{percentile}} upper")).
			Thresholds(levels("green", level{1, "red"})).ThresholdsStyle(thresholdLines())).
		WithPanel(timeSeries("Comparison pairs and epochs", "Pairs of each epoch with both requests successful (what the figures and decisions rest on), pairs a side failed, which no figure counts, and epochs started afresh by reason (window, baseline, candidate).", unitCount,
			q(`max by (comparison, scenario) (llmprobe_comparison_pairs)`, "{{comparison}} {{scenario}} in the epoch"),
			q(`sum by (comparison, scenario, reason) (increase(llmprobe_comparison_epochs_total{reason!="start"}[$__rate_interval]))`, "{{comparison}} {{scenario}} epoch: {{reason}}"),
			q(`sum by (comparison, scenario, result) (increase(llmprobe_comparison_pairs_total{result!="measured"}[$__rate_interval]))`, "{{comparison}} {{scenario}} {{result}}")))
}
