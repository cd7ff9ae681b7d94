package web

import (
	"fmt"
	"strings"

	"github.com/llmprobe/llmprobe/enginemetrics"
	"github.com/llmprobe/llmprobe/report"
	reportrender "github.com/llmprobe/llmprobe/report/render"
)

// engineView is a report's engine section formatted for reading; every
// missing figure is "n/a" with its reason.
type engineView struct {
	Summary string // the section's one line: family and source, or n/a and why
	OK      bool
	Scrapes []engineScrapeRow
	Figures []engineFigureRow
	Compare []engineCompareRow
	Gauges  string
	// SpecDecode is the draft model's acceptance ("" for a family without).
	SpecDecode string
	Note       string
	// Resolution says what the figures rest on: buckets, or counters only.
	Resolution string
	Buckets    bool
	Queued     string
}

type engineScrapeRow struct {
	Name, Time, Duration, State string
	OK                          bool
}

type engineFigureRow struct {
	Metric, Count, P50, P90, P99, Mean, Source, NA string
}

type engineCompareRow struct {
	Metric, Quantile, Client, Server, Bucket, Difference, NA string
}

func newEngineView(e *report.EngineMetrics) engineView {
	v := engineView{Summary: reportrender.EngineSummary(e)}
	if e == nil {
		return v
	}
	v.OK, v.Note, v.Queued = e.Error == "", e.Note, e.Queued
	for _, p := range []struct {
		name string
		page *enginemetrics.Page
	}{{"before", e.Before}, {"after", e.After}} {
		page := p.page
		if page == nil {
			continue
		}
		row := engineScrapeRow{Name: p.name, Time: page.Time.Format("2006-01-02 15:04:05.000 MST"), Duration: fmt.Sprintf("%.3f s", page.Duration), State: "ok", OK: page.Error == ""}
		if !row.OK {
			row.State = "failed: " + page.Error
		}
		v.Scrapes = append(v.Scrapes, row)
	}
	if !v.OK {
		return v
	}
	v.Resolution, v.Buckets = reportrender.EngineResolution(&e.Window), e.HasBuckets()
	for _, f := range e.Figures {
		row := engineFigureRow{Metric: f.Metric, Source: f.Source, NA: f.NA, Count: reportrender.CountText(f), P50: "n/a", P90: "n/a", P99: "n/a", Mean: "n/a"}
		if f.Mean != nil {
			row.Mean = msFigure(*f.Mean, true)
		}
		for _, q := range f.Quantiles {
			s := q.Bucket()
			switch q.Name {
			case "p50":
				row.P50 = s
			case "p90":
				row.P90 = s
			case "p99":
				row.P99 = s
			}
		}
		if f.Note != "" {
			row.Source += " (" + f.Note + ")"
		}
		v.Figures = append(v.Figures, row)
	}
	for _, c := range e.ClientVsServer {
		// Every figure goes through the report's one rule: a server
		// percentile as its bucket, a difference only as exact as it is.
		row := engineCompareRow{Metric: c.Metric, Quantile: c.Quantile,
			Client: msFigure(deref(c.Client), c.Client != nil), Server: reportrender.ServerFigure(c),
			Bucket: c.Resolution, Difference: c.Diff().Text()}
		if c.Server == nil || c.Client == nil {
			row.NA = c.NA
		}
		v.Compare = append(v.Compare, row)
	}
	v.Gauges = reportrender.GaugesText(&e.Window)
	var absent []string
	for _, g := range e.Gauges {
		if g.NA != "" {
			absent = append(absent, g.Metric+" n/a ("+g.NA+")")
		}
	}
	v.Gauges = strings.Trim(v.Gauges+"; "+strings.Join(absent, "; "), "; ")
	v.SpecDecode = strings.Trim(reportrender.SpecDecodeText(&e.Window)+". "+reportrender.LoRAText(&e.Window), ". ")
	return v
}
