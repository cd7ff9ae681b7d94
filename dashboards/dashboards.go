// Package dashboards builds llmprobe's Grafana dashboards with Grafana's
// foundation SDK; `make generate` writes them as JSON next to this file.
package dashboards

// The Helm chart ships a copy: Helm reads no file outside the chart.
//go:generate go run ./internal/generate . ../deploy/helm/llmprobe/files/dashboards

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

// Grafana units used on more than one panel. Grafana has no token-rate
// unit, so that one is a custom suffix.
const (
	unitSeconds   = "s"
	unitRatio     = "percentunit"
	unitReqPerSec = "reqps"
	unitTokPerSec = "suffix: tok/s"
	unitCount     = "short"
	unitNone      = "none"
	unitYesNo     = "bool_yes_no"
)

func ptr[T any](v T) *T { return &v }

var datasource = common.DataSourceRef{Type: ptr("prometheus"), Uid: ptr("${datasource}")}

// Query is one PromQL expression of a panel.
type Query struct {
	Expr, Legend string
	// Exemplar asks Grafana for the exemplars of the query's series: the
	// request id of an observation, which the data source's exemplar link
	// opens on llmprobe (/probe?id=, docs/dashboards.md).
	Exemplar bool
}

func q(expr, legend string) Query { return Query{Expr: expr, Legend: legend} }

// withExemplars is query with its exemplars shown. One query per panel
// asks for them: each query that does draws the same points again.
func withExemplars(query Query) Query {
	query.Exemplar = true
	return query
}

func target(query Query, ref string) *prometheus.DataqueryBuilder {
	b := prometheus.NewDataqueryBuilder().Expr(query.Expr).LegendFormat(query.Legend).RefId(ref).Datasource(datasource)
	if query.Exemplar {
		b.Exemplar(true)
	}
	return b
}

var refIDs = []string{"A", "B", "C", "D", "E", "F", "G", "H"}

// level is one threshold step: from value on, color.
type level struct {
	from  float64
	color string
}

// levels are absolute thresholds: base below the first step.
func levels(base string, steps ...level) *dashboard.ThresholdsConfigBuilder {
	out := []dashboard.Threshold{{Color: base}}
	for _, s := range steps {
		out = append(out, dashboard.Threshold{Value: ptr(s.from), Color: s.color})
	}
	return dashboard.NewThresholdsConfigBuilder().Mode(dashboard.ThresholdsModeAbsolute).Steps(out)
}

// Thresholds shared by several panels.
var (
	// neutral colours a configured value: it is neither good nor bad.
	neutral = func() *dashboard.ThresholdsConfigBuilder { return levels("blue") }
	// burnLevels are the alert rules' burn-rate factors: 1 spends the budget
	// in exactly the SLO period, 6 and 14.4 page.
	burnLevels = func() *dashboard.ThresholdsConfigBuilder {
		return levels("green", level{1, "yellow"}, level{6, "orange"}, level{14.4, "red"})
	}
	// budgetLevels: overspent red, the last quarter orange.
	budgetLevels = func() *dashboard.ThresholdsConfigBuilder {
		return levels("red", level{0, "orange"}, level{0.25, "green"})
	}
	// objectiveLevels colour a measured value over its objective: 1 is the objective.
	objectiveLevels = func() *dashboard.ThresholdsConfigBuilder {
		return levels("green", level{0.8, "yellow"}, level{1, "red"})
	}
	goodWhenOne = func() *dashboard.ThresholdsConfigBuilder { return levels("red", level{1, "green"}) }
	badWhenOne  = func() *dashboard.ThresholdsConfigBuilder { return levels("green", level{1, "red"}) }
)

// noData shows "n/a" for a figure without samples (a 0/0 ratio is NaN), never 0.
func noData(extra ...dashboard.ValueMapping) []dashboard.ValueMapping {
	return append([]dashboard.ValueMapping{{SpecialValueMap: &dashboard.SpecialValueMap{
		Type:    dashboard.MappingTypeSpecialValue,
		Options: dashboard.DashboardSpecialValueMapOptions{Match: dashboard.SpecialValueMatchNullAndNan, Result: dashboard.ValueMappingResult{Text: ptr("n/a")}},
	}}}, extra...)
}

// texts maps exact values to words and colours.
func texts(pairs ...[3]string) dashboard.ValueMapping {
	options := map[string]dashboard.ValueMappingResult{}
	for i, p := range pairs {
		options[p[0]] = dashboard.ValueMappingResult{Text: ptr(p[1]), Color: ptr(p[2]), Index: ptr(int32(i))}
	}
	return dashboard.ValueMapping{ValueMap: &dashboard.ValueMap{Type: dashboard.MappingTypeValueToText, Options: options}}
}

func timeSeries(title, description, unit string, queries ...Query) *timeseries.PanelBuilder {
	p := timeseries.NewPanelBuilder().Title(title).Description(description).Unit(unit).Datasource(datasource).
		Height(8).Span(12).LineWidth(1).FillOpacity(10).Mappings(noData())
	for i, query := range queries {
		p.WithTarget(target(query, refIDs[i]))
	}
	return p
}

// withObjective draws the configured objective as a red dashed series next to
// measured latencies: Grafana's thresholds are static, the objective is not.
func withObjective(p *timeseries.PanelBuilder, objective string, queries int) *timeseries.PanelBuilder {
	return p.WithTarget(target(q(`max by (scenario) (llmprobe_slo_objective_seconds{objective="`+objective+`", scenario=~"$scenario"})`,
		"{{scenario}} "+objective+" objective"), refIDs[queries])).
		OverrideByQuery(refIDs[queries], []dashboard.DynamicConfigValue{
			{Id: "color", Value: map[string]any{"mode": "fixed", "fixedColor": "red"}},
			{Id: "custom.lineStyle", Value: map[string]any{"fill": "dash", "dash": []int{10, 10}}},
			{Id: "custom.fillOpacity", Value: 0},
		})
}

func statPanel(title, description, unit string, th *dashboard.ThresholdsConfigBuilder, queries ...Query) *stat.PanelBuilder {
	p := stat.NewPanelBuilder().Title(title).Description(description).Unit(unit).Datasource(datasource).Height(4).Span(6).
		Thresholds(th).ColorMode(common.BigValueColorModeValue).Mappings(noData()).
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"}))
	for i, query := range queries {
		p.WithTarget(target(query, refIDs[i]))
	}
	return p
}

// column is one value column of a table: an instant query joined to the
// others on their labels.
type column struct {
	name, unit string
	expr       string
	th         *dashboard.ThresholdsConfigBuilder
	mappings   []dashboard.ValueMapping
}

// tablePanel joins instant queries on the labels keys (Grafana's merge), one
// row per label set, a column per query.
func tablePanel(title, description string, keys []string, cols ...column) *table.PanelBuilder {
	p := table.NewPanelBuilder().Title(title).Description(description).Unit(unitNone).Datasource(datasource).
		Height(9).Span(24).NoValue("n/a").Mappings(noData()).Thresholds(neutral()).
		Footer(common.NewTableFooterOptionsBuilder().Show(false).Reducer([]string{}))
	order := map[string]int{}
	for i, k := range keys {
		order[k] = i
	}
	for i, c := range cols {
		ref := refIDs[i]
		p.WithTarget(target(q(c.expr, ""), ref).Instant().Format(prometheus.PromQueryFormatTable))
		field := "Value #" + ref
		order[field] = len(keys) + i
		props := []dashboard.DynamicConfigValue{{Id: "displayName", Value: c.name}, {Id: "unit", Value: c.unit}}
		if c.th != nil {
			th, err := c.th.Build()
			if err == nil {
				props = append(props, dashboard.DynamicConfigValue{Id: "thresholds", Value: th},
					dashboard.DynamicConfigValue{Id: "custom.cellOptions", Value: map[string]any{"type": "color-text"}})
			}
		}
		if c.mappings != nil {
			props = append(props, dashboard.DynamicConfigValue{Id: "mappings", Value: noData(c.mappings...)})
		}
		p.OverrideByName(field, props)
	}
	p.WithTransformation(dashboard.DataTransformerConfig{Id: "merge", Options: map[string]any{}})
	p.WithTransformation(dashboard.DataTransformerConfig{Id: "organize", Options: map[string]any{
		"excludeByName": map[string]bool{"Time": true},
		"indexByName":   order,
	}})
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

// quantile is histogram_quantile(phi) of an llmprobe histogram by the
// labels in by: from its native histogram where Prometheus ingests them,
// else from its classic buckets, so the panel works with either and with
// --no-metrics.classic-buckets.
func quantile(phi, metric, sel, by string) string {
	return `(histogram_quantile(` + phi + `, sum by (` + by + `) (rate(` + metric + `{` + sel + `}[$__rate_interval])))` +
		` or ` + classicQuantile(phi, metric, sel, by) + `)`
}

// classicQuantile is histogram_quantile(phi) of metric's classic buckets by
// the labels in by: the engines' histograms have no native part.
func classicQuantile(phi, metric, sel, by string) string {
	return `histogram_quantile(` + phi + `, sum by (` + by + `, le) (rate(` + metric + `_bucket{` + sel + `}[$__rate_interval])))`
}

// distribution is an llmprobe histogram summed over the selected series,
// for a heatmap: the native histogram where Prometheus has it, else the
// classic buckets by le.
func distribution(metric, sel string) string {
	native := `sum(rate(` + metric + `{` + sel + `}[$__rate_interval]))`
	return native + ` or (sum by (le) (rate(` + metric + `_bucket{` + sel + `}[$__rate_interval])) unless on () ` + native + `)`
}

// quantiles draws p50, p90 and p99 of a histogram metric, and the
// exemplars of its buckets with the p99.
func quantiles(metric, sel, by string) []Query {
	var out []Query
	for _, qt := range []struct{ q, name string }{{"0.5", "p50"}, {"0.9", "p90"}, {"0.99", "p99"}} {
		out = append(out, q(quantile(qt.q, metric, sel, by), "{{target}} {{scenario}} "+qt.name))
	}
	out[len(out)-1].Exemplar = true
	return out
}

// All returns every dashboard by file name.
func All() (map[string]cog.Builder[dashboard.Dashboard], error) {
	return map[string]cog.Builder[dashboard.Dashboard]{
		"llmprobe-slo.json":      sloOverview(),
		"llmprobe-latency.json":  latency(),
		"llmprobe-engines.json":  engines(),
		"llmprobe-bursts.json":   withSweeps(bursts()),
		"llmprobe-gpu.json":      gpu(),
		"llmprobe-upgrades.json": withComparisons(upgrades()),
	}, nil
}

// thresholdLines draws a timeseries panel's thresholds as dashed lines.
func thresholdLines() *common.GraphThresholdsStyleConfigBuilder {
	return common.NewGraphThresholdsStyleConfigBuilder().Mode(common.GraphThresholdsStyleModeDashed)
}
