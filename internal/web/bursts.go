package web

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"sort"
	"strings"

	"github.com/llmprobe/llmprobe/report"
)

// burstRow is one burst on the /bursts page.
type burstRow struct {
	Name        string
	Latest      *report.Report
	LoadError   string
	IDs         []string
	Percentiles *barChart
	TTFT        *scatterChart
}

func (s *Site) burstsPage(w http.ResponseWriter, _ *http.Request) {
	lists, err := s.opts.Store.List()
	if err != nil {
		http.Error(w, "reading the burst reports: "+err.Error(), http.StatusInternalServerError)
		return
	}
	var rows []burstRow
	for name, ids := range lists {
		row := burstRow{Name: name, IDs: ids}
		if len(ids) > 0 {
			if rep, err := s.opts.Store.Load(ids[0]); err != nil {
				row.LoadError = err.Error()
			} else {
				row.Latest = rep
				row.Percentiles = percentileChart(rep)
				row.TTFT = ttftChart(rep)
			}
		}
		rows = append(rows, row)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	s.render(w, "bursts.html", rows)
}

func (s *Site) burstReport(w http.ResponseWriter, r *http.Request) {
	id, ok := strings.CutSuffix(r.PathValue("file"), ".json")
	if !ok {
		http.NotFound(w, r)
		return
	}
	rep, err := s.opts.Store.Load(id)
	if errors.Is(err, os.ErrNotExist) {
		http.NotFound(w, r)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(rep)
}
