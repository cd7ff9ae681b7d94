package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/xychart"
)

// stepColumn is one figure of the last sweep's steps, one row per step.
func stepColumn(name, unit, metric, matchers string) column {
	return column{name: name, unit: unit, expr: `max by (burst, step) (` + metric + `{burst=~"$burst"` + matchers + `})`}
}

// curveColumns are the QPS–latency curve: the offered rate first (the XY
// chart's x), then p50 and p99 of TTFT and TPOT.
func curveColumns() []column {
	latency := func(name, metric, q string) column {
		return stepColumn(name, unitSeconds, "llmprobe_burst_sweep_step_latency_seconds", `, metric="`+metric+`", percentile="`+q+`"`)
	}
	return []column{stepColumn("Offered rate", unitReqPerSec, "llmprobe_burst_sweep_step_offered_rate", ""),
		latency("TTFT p50", "ttft", "p50"), latency("TTFT p99", "ttft", "p99"), latency("TPOT p50", "tpot", "p50"), latency("TPOT p99", "tpot", "p99")}
}

// sweepCurve draws the last sweep's QPS–latency curve: latency against
// the offered rate, one point per step, joined on the step label.
func sweepCurve() *xychart.PanelBuilder {
	p := xychart.NewPanelBuilder().Title("QPS–latency curve (last sweep)").
		Description("Each step of the selected burst's last sweep (pick one burst): TTFT and TPOT p50 and p99 against the offered rate. Where p99 turns up is the knee; Max rate under SLO and Max rate failing bound it.").
		Unit(unitSeconds).Datasource(datasource).Height(9).Span(12).Mapping(xychart.SeriesMappingAuto).Show(xychart.XYShowModePointsAndLines)
	for i, c := range curveColumns() {
		p.WithTarget(target(q(c.expr, ""), refIDs[i]).Instant().Format(prometheus.PromQueryFormatTable))
		p.OverrideByName("Value #"+refIDs[i], []dashboard.DynamicConfigValue{{Id: "displayName", Value: c.name}, {Id: "unit", Value: c.unit}})
	}
	p.WithTransformation(dashboard.DataTransformerConfig{Id: "merge", Options: map[string]any{}})
	p.WithTransformation(dashboard.DataTransformerConfig{Id: "organize", Options: map[string]any{"excludeByName": map[string]bool{"Time": true, "burst": true, "step": true}}})
	// The step label sorts as text (10 before 2): join the points by rate.
	p.WithTransformation(dashboard.DataTransformerConfig{Id: "sortBy", Options: map[string]any{"fields": map[string]any{}, "sort": []map[string]any{{"field": "Value #A"}}}})
	return p
}

// sweepTable is the curve as a table, with each step's output tokens per
// second and whether it held the SLO.
func sweepTable() *table.PanelBuilder {
	cols := append(curveColumns(),
		stepColumn("Output tok/s", unitTokPerSec, "llmprobe_burst_sweep_step_output_tokens_per_second", ""),
		column{name: "Held SLO", unit: unitNone, expr: `max by (burst, step) (llmprobe_burst_sweep_step_passed{burst=~"$burst"})`, th: goodWhenOne(),
			mappings: []dashboard.ValueMapping{texts([3]string{"1", "held", "green"}, [3]string{"0", "missed", "red"})}})
	return tablePanel("Sweep steps (last sweep)", "Every step of each burst's last sweep by offered rate: the curve's figures, output throughput (the throughput–latency frontier) and whether the step held the SLO (its goodput's 95 % lower bound reached the target ratio).",
		[]string{"burst", "step"}, cols...).Span(12)
}

// withSweeps adds the bursts dashboard's sweep row: the curve, its steps,
// the knee's upper bound and the fleet and price the sweep implies.
func withSweeps(d *dashboard.DashboardBuilder) *dashboard.DashboardBuilder {
	sel := `{burst=~"$burst"}`
	return d.WithRow(row("Sweeps: curve, capacity, cost")).
		WithPanel(sweepCurve()).
		WithPanel(sweepTable()).
		WithPanel(statPanel("Max rate failing", "From a sweep: the lowest rate above the max rate under SLO that missed it; the max lies between. Empty when no step failed: the max is then at least the max rate under SLO.", unitReqPerSec, neutral(), q(`llmprobe_burst_max_rate_failing`+sel, "{{burst}}"))).
		WithPanel(statPanel("Instances needed", "capacity: ⌈target_rate × (1 + headroom) / max rate under SLO⌉; an upper bound when no step failed.", unitNone, neutral(), q(`llmprobe_burst_capacity_instances`+sel, "{{burst}}"))).
		WithPanel(statPanel("GPUs needed", "The instances times the GPUs of one.", unitNone, neutral(), q(`llmprobe_burst_capacity_gpus`+sel, "{{burst}}"))).
		WithPanel(statPanel("Cost per million output tokens", "cost: one instance's hourly price over the output tokens it makes at the max rate under SLO.", unitNone, neutral(), q(`llmprobe_burst_cost_per_million_tokens{burst=~"$burst", tokens="output"}`, "{{burst}}")))
}
