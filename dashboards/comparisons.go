package dashboards

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

// withComparisons adds the always-on comparisons' row: each candidate's
// ratio to its baseline with the 95 % interval, the verdict the alert
// fires on, and the pairs each figure rests on.
func withComparisons(b *dashboard.DashboardBuilder) *dashboard.DashboardBuilder {
	const by = `comparison, scenario, metric, percentile`
	return b.WithRow(row("Canary analysis")).
		WithPanel(timeSeries("Comparison verdict", "Each always-on comparison's verdict per scenario, metric and percentile: 1 worse (the 95 % interval past the tolerance), 0 neither (within the tolerance, or not enough evidence), -1 better (the interval past it the other way); no line before min_pairs. LLMProbeComparisonWorse fires on a 1 that holds for the window.", unitNone,
			q(`max by (`+by+`) (llmprobe_comparison_verdict)`, "{{comparison}} {{scenario}} {{metric}} {{percentile}}")).
			Thresholds(badWhenOne()).ThresholdsStyle(thresholdLines())).
		WithPanel(timeSeries("Comparison ratio at p50", "The candidate's median over the baseline's (Hodges-Lehmann, paired: the same prompt to both at the same moment), with its 95 % interval; above 1 is slower.", unitNone,
			q(`max by (`+by+`) (llmprobe_comparison_ratio{percentile="p50"})`, "{{comparison}} {{scenario}} {{metric}}"),
			q(`max by (`+by+`) (llmprobe_comparison_ratio_lower{percentile="p50"})`, "{{comparison}} {{scenario}} {{metric}} lower"),
			q(`max by (`+by+`) (llmprobe_comparison_ratio_upper{percentile="p50"})`, "{{comparison}} {{scenario}} {{metric}} upper")).
			Thresholds(levels("green", level{1, "red"})).ThresholdsStyle(thresholdLines())).
		WithPanel(timeSeries("Comparison ratio at p90 and p99", "The ratio of the candidate's p90 and p99 to the baseline's, with the paired bootstrap's 95 % interval: from 36 and 368 pairs in the window (fewer say nothing about a tail).", unitNone,
			q(`max by (`+by+`) (llmprobe_comparison_ratio{percentile!="p50"})`, "{{comparison}} {{scenario}} {{metric}} {{percentile}}"),
			q(`max by (`+by+`) (llmprobe_comparison_ratio_lower{percentile!="p50"})`, "{{comparison}} {{scenario}} {{metric}} {{percentile}} lower"),
			q(`max by (`+by+`) (llmprobe_comparison_ratio_upper{percentile!="p50"})`, "{{comparison}} {{scenario}} {{metric}} {{percentile}} upper")).
			Thresholds(levels("green", level{1, "red"})).ThresholdsStyle(thresholdLines())).
		WithPanel(timeSeries("Comparison pairs", "Pairs in each window with both requests successful (what the figures rest on), and pairs a side failed, which no figure counts.", unitCount,
			q(`max by (comparison, scenario) (llmprobe_comparison_pairs)`, "{{comparison}} {{scenario}} in the window"),
			q(`sum by (comparison, scenario, result) (increase(llmprobe_comparison_pairs_total{result!="measured"}[$__rate_interval]))`, "{{comparison}} {{scenario}} {{result}}")))
}
