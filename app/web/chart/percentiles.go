package chart

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/llmprobe/llmprobe/lib/figure"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/stats"
)

// percentileMetrics are the latencies charted, in the table's reading
// order; dispatch_delay is llmprobe's own lateness and stays in the table.
var percentileMetrics = []string{"ttft", "ttft_answer", "ttft_tool", "tpot", "itl", "e2e"}

// everyBurstMetrics are the latencies a chat burst has; where one has no
// samples, the page says so in words instead of drawing an empty chart.
var everyBurstMetrics = map[string]bool{"ttft": true, "tpot": true, "itl": true, "e2e": true}

// Size of one metric's panel: five fit a row of the report page.
const panelWidth, panelHeight = 220, 230

// Percentiles draws p50, p90 and p99 of each latency metric with samples,
// one small chart per metric, each on its own linear axis from zero in
// milliseconds. Small multiples rather than one chart: ITL (~10 ms) and
// e2e (~1 s) on one linear axis leave ITL invisible, and a log axis would
// make bar lengths meaningless (a bar on it starts at an arbitrary floor);
// apart, each bar's length is its value and the p50→p99 tail of a metric,
// the comparison a reader makes, is plain. A bar from too few samples is
// faint and says "too few" under it. NA lists the metrics every burst has
// that have no samples here (an embeddings burst's ttft, tpot and itl).
func Percentiles(r *report.Report) (charts []*Chart, na []string) {
	for _, m := range percentileMetrics {
		s := r.Latency[m]
		if s.Count == 0 {
			if everyBurstMetrics[m] {
				na = append(na, m)
			}
			continue
		}
		charts = append(charts, percentilePanel(r.ID, m, s))
	}
	return charts, na
}

func percentilePanel(id, m string, s stats.Summary) *Chart {
	quantiles := []string{"p50", "p90", "p99"}
	c := newChart("chart percentiles percentiles-"+m, m+" percentiles of "+id,
		fmt.Sprintf("%s (%d samples)", m, s.Count), "", "ms")
	c.resize(panelWidth, panelHeight)
	c.Left, c.Top = 48, 36
	top := 0.0
	for _, q := range quantiles {
		top = max(top, 1000*s.Quantile(q))
	}
	y := c.yAxis(top)
	slot := (c.Right - c.Left) / float64(len(quantiles))
	for j, q := range quantiles {
		v := 1000 * s.Quantile(q)
		x := c.Left + float64(j)*slot
		c.Bars = append(c.Bars, bar{
			X: x + slot*0.2, Y: y(v), W: slot * 0.6, H: c.Bottom - y(v), Fill: chartColors[j],
			Title: strings.TrimSuffix(fmt.Sprintf("%s %s %s; %s", m, q, figure.PageMs(v/1000), s.TooFewText(q)), "; "),
			Label: msLabel(v), Faint: s.IsTooFew(q),
		})
		c.Categories = append(c.Categories, tick{Pos: x + slot/2, Text: q})
		if s.IsTooFew(q) {
			c.Notes = append(c.Notes, tick{Pos: x + slot/2, Text: "too few"})
		}
	}
	return c
}

// msLabel writes a bar's value with three significant digits at most:
// 1176, 47.7, 0.82.
func msLabel(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
