package main

import (
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"sort"
	"strings"

	"github.com/go-kit/log/level"

	"github.com/llmprobe/llmprobe/prober"
)

// burstRow is one burst on the /bursts page.
type burstRow struct {
	Name    string
	Latest  *prober.Report
	IDs     []string
	Charts  template.HTML
	Summary []gateLine
}

type gateLine struct {
	Name, Detail string
	Passed       bool
}

func (d *daemon) burstsPage(w http.ResponseWriter, _ *http.Request) {
	lists, err := d.store.List()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	var rows []burstRow
	for name, ids := range lists {
		row := burstRow{Name: name, IDs: ids}
		if len(ids) > 0 {
			if rep, err := d.store.Load(name, ids[0]); err == nil {
				row.Latest = rep
				row.Charts = percentileChart(rep) + ttftChart(rep)
				for _, g := range rep.Gates {
					row.Summary = append(row.Summary, gateLine{g.Name, g.Detail, g.Passed})
				}
			}
		}
		rows = append(rows, row)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := burstsTmpl.Execute(w, rows); err != nil {
		level.Error(d.logger).Log("msg", "bursts page", "err", err)
	}
}

func (d *daemon) burstReport(w http.ResponseWriter, r *http.Request) {
	file := r.PathValue("file")
	id, ok := strings.CutSuffix(file, ".json")
	// Report ids are <burst>-<YYYYMMDDTHHMMSSZ>.
	if !ok || len(id) < 18 || id[len(id)-17] != '-' {
		http.NotFound(w, r)
		return
	}
	rep, err := d.store.Load(id[:len(id)-17], id)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(rep)
}

var chartColors = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2"}

// percentileChart draws p50/p90/p99 of each latency metric as grouped bars.
func percentileChart(r *prober.Report) template.HTML {
	metrics := []string{"ttft", "tpot", "itl", "e2e"}
	quantiles := []string{"p50", "p90", "p99"}
	maxV := 0.0
	for _, m := range metrics {
		maxV = max(maxV, r.Latency[m].P99)
	}
	if maxV == 0 {
		return ""
	}
	const w, h, pad = 520, 220, 40
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart percentiles" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img" aria-label="latency percentiles of %s">`, w, h, template.HTMLEscapeString(r.ID))
	fmt.Fprintf(&b, `<text x="%d" y="14" font-size="12">latency percentiles (s, max %.3g)</text>`, pad, maxV)
	group := float64(w-2*pad) / float64(len(metrics))
	bar := group / float64(len(quantiles)+1)
	for i, m := range metrics {
		for j, q := range quantiles {
			v := r.Latency[m].Quantile(q)
			bh := (v / maxV) * float64(h-2*pad)
			x := float64(pad) + float64(i)*group + float64(j)*bar
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s %.4gs</title></rect>`,
				x, float64(h-pad)-bh, bar-2, bh, chartColors[j], m, q, v)
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="11">%s</text>`, float64(pad)+float64(i)*group, h-pad+14, m)
	}
	for j, q := range quantiles {
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d" font-size="11">%s</text>`, w-pad-120+j*40, 22, chartColors[j], w-pad-106+j*40, 31, q)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// ttftChart plots each measured request's TTFT against its arrival time.
func ttftChart(r *prober.Report) template.HTML {
	if len(r.TTFTSeries) == 0 {
		return ""
	}
	const w, h, pad = 520, 220, 40
	maxX, maxY := 0.0, 0.0
	for _, p := range r.TTFTSeries {
		maxX, maxY = max(maxX, p[0]), max(maxY, p[1])
	}
	maxX, maxY = max(maxX, 1e-9), max(maxY, 1e-9)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart ttft-over-time" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img" aria-label="TTFT over the burst">`, w, h)
	fmt.Fprintf(&b, `<text x="%d" y="14" font-size="12">TTFT over the burst (max %.3gs over %.3gs)</text>`, pad, maxY, maxX)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999"/>`, pad, h-pad, w-pad, h-pad)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999"/>`, pad, pad, pad, h-pad)
	for _, p := range r.TTFTSeries {
		x := float64(pad) + p[0]/maxX*float64(w-2*pad)
		y := float64(h-pad) - p[1]/maxY*float64(h-2*pad)
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="2" fill="%s"/>`, x, y, chartColors[0])
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

var burstsTmpl = template.Must(template.New("bursts").Funcs(template.FuncMap{
	"pct": func(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) },
	"ms":  func(v float64) string { return fmt.Sprintf("%.1f ms", 1000*v) },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>llmprobe · bursts</title>
<style>body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}table{border-collapse:collapse;margin:.5em 0 1em}th,td{border:1px solid #ccc;padding:.2em .5em;font-size:.9em;text-align:left}.ok{color:#17702a}.bad{color:#b00020;font-weight:600}svg{margin-right:1em;border:1px solid #eee}</style>
</head><body>
<p><a href="/">← llmprobe</a></p>
<h1>Bursts</h1>
{{range .}}<section class="burst" id="burst-{{.Name}}">
<h2>{{.Name}}</h2>
{{with .Latest}}<p>Last run <a href="/bursts/{{.ID}}.json">{{.ID}}</a>: target {{.Target}} ({{.Engine}} {{.EngineVersion}}), rate {{.Rate}}/s, achieved {{printf "%.2f" .AchievedRate}}/s, {{.Requests}} requests,
goodput {{pct .Goodput.Ratio}}, TTFT p99 {{ms (index .Latency "ttft").P99}},
<span class="{{if .Passed}}ok{{else}}bad{{end}}">{{if .Passed}}passed{{else}}failed{{end}}</span>{{if .Aborted}} <span class="bad">aborted: {{.AbortReason}}</span>{{end}}{{if .ClientSaturated}} <span class="bad">client saturated</span>{{end}}
{{with .MaxRateUnderSLO}}· max rate under SLO {{.}}/s{{end}}</p>{{end}}
{{.Charts}}
{{if .Summary}}<table><tr><th>gate</th><th>verdict</th></tr>{{range .Summary}}<tr><td>{{.Name}}</td><td class="{{if .Passed}}ok{{else}}bad{{end}}">{{.Detail}}</td></tr>{{end}}</table>{{end}}
<p>Reports: {{range .IDs}}<a href="/bursts/{{.}}.json">{{.}}</a> {{end}}</p>
</section>
{{else}}<p>No burst report yet.</p>{{end}}
</body></html>
`))
