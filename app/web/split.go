package web

import (
	"fmt"
	"time"

	"github.com/llmprobe/llmprobe/prober"
)

// splitRow is one TTFT component of a request, for its probe page.
type splitRow struct {
	Component, Meaning string
	D                  time.Duration
	Share              string // of the request's TTFT
}

// splitRows is the request's TTFT split in the order it passed the parts;
// nil without a first token.
func splitRows(r *prober.Result) []splitRow {
	rows := make([]splitRow, 0, len(r.TTFTParts))
	for _, p := range r.TTFTParts {
		share := "n/a"
		if r.TTFT > 0 {
			share = fmt.Sprintf("%.1f%%", 100*float64(p.D)/float64(r.TTFT))
		}
		rows = append(rows, splitRow{Component: p.Component, Meaning: componentMeaning[p.Component], D: p.D, Share: share})
	}
	return rows
}
