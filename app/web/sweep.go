package web

import (
	"cmp"
	"slices"

	"github.com/llmprobe/llmprobe/report"
)

// sweepRow is one step of the curve's table; Knee marks the highest rate
// that held the SLO.
type sweepRow struct {
	report.SweepStep
	Knee bool
}

// sweepRows are r's steps by offered rate: bisecting steps ran after the
// linear ones but lie between them.
func sweepRows(r *report.Report) []sweepRow {
	rows := make([]sweepRow, 0, len(r.Sweep))
	for _, s := range r.Sweep {
		rows = append(rows, sweepRow{SweepStep: s, Knee: s.Passed && r.MaxRateUnderSLO != nil && *r.MaxRateUnderSLO == s.Rate})
	}
	slices.SortStableFunc(rows, func(a, b sweepRow) int { return cmp.Compare(a.Rate, b.Rate) })
	return rows
}
