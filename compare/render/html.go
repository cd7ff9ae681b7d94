package render

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/llmprobe/llmprobe/compare"
)

// Chart geometry, in SVG user units.
const (
	chartW, chartH               = 520, 260
	padLeft, padRight, padTop    = 56, 16, 16
	padBottom                    = 44
	baselineColor, candidateColr = "#4e79a7", "#e15759"
)

// ecdf is one metric's chart: both sides' empirical distribution functions
// as step lines, the x axis in milliseconds.
type ecdf struct {
	Title          string
	W, H           int
	Left, Right    float64
	Top, Bottom    float64
	XTicks, YTicks []axisTick
	Lines          []ecdfLine
	Summary        string // the metric's verdict under the chart
}

type axisTick struct {
	Pos  float64
	Text string
}

type ecdfLine struct {
	Label, Color, Points string
}

// HTML writes a page of the comparison: the verdict, the table of metrics,
// and per latency both sides' distributions (ECDFs) as inline SVG.
func HTML(w io.Writer, c *compare.Comparison) error {
	var text strings.Builder
	Text(&text, c)
	data := struct {
		C        *compare.Comparison
		Headline string
		Rows     []row
		Charts   []ecdf
		Text     string
		Colors   [2]string
	}{C: c, Headline: Headline(c), Text: text.String(), Colors: [2]string{baselineColor, candidateColr}}
	for _, m := range c.Metrics {
		data.Rows = append(data.Rows, row{m.Name(), m.Pairs, estimate(m), interval(m), pValue(m), perRound(m), verdictCell(m), strings.ReplaceAll(string(m.Verdict), " ", "-")})
	}
	for _, m := range compare.Latencies {
		if ch := newECDF(m, c); ch != nil {
			data.Charts = append(data.Charts, *ch)
		}
	}
	if err := page.Execute(w, data); err != nil {
		return fmt.Errorf("comparison page: %w", err)
	}
	return nil
}

type row struct {
	Name                                          string
	Pairs                                         int
	Estimate, Interval, P, Rounds, Verdict, Class string
}

// newECDF lays out metric m's chart; nil when neither side has samples.
func newECDF(m string, c *compare.Comparison) *ecdf {
	sides := [2][]float64{c.Baseline.Samples[m], c.Candidate.Samples[m]}
	hi := 0.0
	for _, xs := range sides {
		if len(xs) > 0 {
			hi = max(hi, 1000*xs[len(xs)-1])
		}
	}
	if hi == 0 {
		return nil
	}
	ch := &ecdf{Title: strings.ToUpper(m) + " per request (ms), cumulative share of the paired requests", W: chartW, H: chartH,
		Left: padLeft, Right: chartW - padRight, Top: padTop, Bottom: chartH - padBottom}
	step, top := tickStep(hi)
	x := func(v float64) float64 { return ch.Left + v/top*(ch.Right-ch.Left) }
	y := func(p float64) float64 { return ch.Bottom - p*(ch.Bottom-ch.Top) }
	for v := 0.0; v <= top*(1+1e-9); v += step {
		ch.XTicks = append(ch.XTicks, axisTick{x(v), strconv.FormatFloat(math.Round(v*1e3)/1e3, 'g', 6, 64)})
	}
	for _, p := range []float64{0, 0.25, 0.5, 0.75, 1} {
		ch.YTicks = append(ch.YTicks, axisTick{y(p), strconv.FormatFloat(p, 'g', -1, 64)})
	}
	for i, xs := range sides {
		var pts strings.Builder
		for j, v := range xs {
			// A step: up at each sample from the share below it.
			px := x(1000 * v)
			fmt.Fprintf(&pts, "%.1f,%.1f %.1f,%.1f ", px, y(float64(j)/float64(len(xs))), px, y(float64(j+1)/float64(len(xs))))
		}
		side := [2]compare.Side{c.Baseline, c.Candidate}[i]
		ch.Lines = append(ch.Lines, ecdfLine{Label: fmt.Sprintf("%s %s", []string{"baseline", "candidate"}[i], side.Target), Color: [2]string{baselineColor, candidateColr}[i], Points: pts.String()})
	}
	for _, mt := range c.Metrics {
		if mt.Metric == m {
			ch.Summary += fmt.Sprintf("%s: %s %s, %s. ", mt.Name(), estimate(mt), interval(mt), mt.Verdict)
		}
	}
	return ch
}

// tickStep is a step of 1, 2 or 5 times a power of ten giving about five
// ticks up to hi, and the axis' end.
func tickStep(hi float64) (step, top float64) {
	raw := hi / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step = 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	return step, math.Ceil(hi/step) * step
}

var page = template.Must(template.New("compare").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>compare {{.C.Burst}}: {{.C.Verdict}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;max-width:70em;color:#222}
table{border-collapse:collapse}td,th{padding:.3em .8em;border-bottom:1px solid #ddd;text-align:left}
td.num,th.num{text-align:right}td.num{white-space:nowrap;font-variant-numeric:tabular-nums}td.verdict{white-space:nowrap}tr.worse td{background:#fde2e1}tr.better td{background:#e2f5e4}
tr.not-enough-evidence td,tr.too-few td{background:#fff3cd}.charts{display:flex;flex-wrap:wrap;gap:1em}
figure{margin:0}figcaption{font-size:.9em;color:#555;max-width:520px}pre{background:#f6f6f6;padding:1em;overflow:auto}
</style></head><body>
<h1>{{.C.Verdict}}: candidate {{.C.Candidate.Target}} vs baseline {{.C.Baseline.Target}}</h1>
<p class="headline">{{.Headline}}</p>
{{range .C.Reasons}}<p>because {{.}}</p>{{end}}
<p>Baseline <b>{{.C.Baseline.Target}}</b> ({{.C.Baseline.URL}}, {{.C.Baseline.Model}}) and candidate <b>{{.C.Candidate.Target}}</b>
({{.C.Candidate.URL}}, {{.C.Candidate.Model}}) were sent burst <code>{{.C.Burst}}</code>'s identical requests (seed {{.C.Seed}})
in {{.C.Rounds}} rounds per side, order {{range $i, $o := .C.Order}}{{if $i}}, {{end}}{{$o}}{{end}}; {{.C.Pairs}} requests succeeded on both sides.</p>
<table><thead><tr><th>metric</th><th class="num">pairs</th><th class="num">candidate/baseline</th><th class="num">95 % interval</th><th class="num">p</th><th class="num">per round</th><th>verdict</th></tr></thead><tbody>
{{range .Rows}}<tr class="{{.Class}}"><td>{{.Name}}</td><td class="num">{{.Pairs}}</td><td class="num">{{.Estimate}}</td><td class="num">{{.Interval}}</td><td class="num">{{.P}}</td><td class="num">{{.Rounds}}</td><td class="verdict">{{.Verdict}}</td></tr>
{{end}}</tbody></table>
<h2>Distributions of the paired requests</h2>
<div class="charts">{{range .Charts}}<figure class="ecdf">
<svg xmlns="http://www.w3.org/2000/svg" width="{{.W}}" height="{{.H}}" viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="{{.Title}}">
<title>{{.Title}}</title>
{{$c := .}}{{range .YTicks}}<line x1="{{$c.Left}}" x2="{{$c.Right}}" y1="{{.Pos}}" y2="{{.Pos}}" stroke="#eee"/><text x="{{$c.Left}}" dx="-6" y="{{.Pos}}" dy="4" text-anchor="end" font-size="11">{{.Text}}</text>
{{end}}{{range .XTicks}}<line x1="{{.Pos}}" x2="{{.Pos}}" y1="{{$c.Top}}" y2="{{$c.Bottom}}" stroke="#eee"/><text x="{{.Pos}}" y="{{$c.Bottom}}" dy="16" text-anchor="middle" font-size="11">{{.Text}}</text>
{{end}}<line x1="{{.Left}}" x2="{{.Right}}" y1="{{.Bottom}}" y2="{{.Bottom}}" stroke="#333"/><line x1="{{.Left}}" x2="{{.Left}}" y1="{{.Top}}" y2="{{.Bottom}}" stroke="#333"/>
<text x="{{.Right}}" y="{{.Bottom}}" dy="34" text-anchor="end" font-size="11">ms</text>
{{range $i, $l := .Lines}}<polyline class="side" fill="none" stroke="{{.Color}}" stroke-width="1.5" points="{{.Points}}"><title>{{.Label}}</title></polyline>
<rect x="{{$c.Left}}" dx="8" y="{{if $i}}36{{else}}20{{end}}" width="10" height="10" fill="{{.Color}}" transform="translate(12,0)"/><text x="{{$c.Left}}" dx="28" y="{{if $i}}45{{else}}29{{end}}" font-size="12">{{.Label}}</text>
{{end}}</svg>
<figcaption>{{.Title}}. {{.Summary}}</figcaption></figure>
{{end}}</div>
<h2>As text</h2>
<pre>{{.Text}}</pre>
</body></html>
`))
