package web

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"

	"github.com/go-kit/log/level"

	"github.com/llmprobe/llmprobe/report"
)

// burstRow is one burst on the /bursts page.
type burstRow struct {
	Name      string
	Latest    *report.Report
	Badge     verdict
	LoadError string
	IDs       []string
	Charts    charts
	// LastUpgrade is the burst's last upgrade run when a later run is newest.
	LastUpgrade *report.Report
}

// upgradeCell is a burst's last upgrade run (nil: none) as of its newest report.
type upgradeCell struct {
	newest string
	rep    *report.Report
}

// lastUpgradeOf returns the last upgrade run of an upgrade burst whose
// newest report (newest) is not one; the store is read again only when
// newest changes.
func (s *Site) lastUpgradeOf(burst, newest string) *report.Report {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.upgradeBursts[burst] {
		return nil
	}
	if c, ok := s.lastUpgrade[burst]; ok && c.newest == newest {
		return c.rep
	}
	rep, err := s.opts.Store.LatestUpgrade(burst)
	if err != nil {
		level.Warn(s.opts.Logger).Log("msg", "the last upgrade report of a burst cannot be read", "burst", burst, "err", err)
	}
	if s.lastUpgrade == nil {
		s.lastUpgrade = map[string]upgradeCell{}
	}
	s.lastUpgrade[burst] = upgradeCell{newest: newest, rep: rep}
	return rep
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
				row.Latest, row.Badge = rep, burstVerdict(rep)
				if rep.Upgrade == nil {
					row.LastUpgrade = s.lastUpgradeOf(name, ids[0])
				}
				row.Charts = newCharts(rep)
			}
		}
		rows = append(rows, row)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	s.render(w, "bursts.html", rows)
}

// burstReport serves /bursts/<id> as the HTML report and /bursts/<id>.json
// as the stored JSON.
func (s *Site) burstReport(w http.ResponseWriter, r *http.Request) {
	file := r.PathValue("file")
	id, asJSON := strings.CutSuffix(file, ".json")
	rep, err := s.opts.Store.Load(id)
	if errors.Is(err, os.ErrNotExist) {
		http.Error(w, "No burst report has this id: it was never written, or it is older than the reports each burst keeps. /bursts lists the reports there are.", http.StatusNotFound)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if asJSON {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// writeReport writes nothing when it fails, so the error can still be sent.
	if err := writeReport(w, rep, true); err != nil {
		level.Error(s.opts.Logger).Log("msg", "rendering a burst report", "id", id, "err", err)
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// latestReport redirects /bursts/latest?burst=NAME to that burst's newest
// report. NAME is looked up among the stored bursts and never echoed.
func (s *Site) latestReport(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("burst")
	if name == "" {
		http.Error(w, "Say which burst: /bursts/latest?burst=NAME, where NAME is one of the bursts /bursts lists.", http.StatusBadRequest)
		return
	}
	lists, err := s.opts.Store.List()
	if err != nil {
		http.Error(w, "reading the burst reports: "+err.Error(), http.StatusInternalServerError)
		return
	}
	ids := lists[name]
	if len(ids) == 0 {
		http.Error(w, "No stored report of a burst with that name: it has not run yet (or not since its reports were removed), or no burst is called so. /bursts lists the bursts that have reports.", http.StatusNotFound)
		return
	}
	http.Redirect(w, r, "/bursts/"+url.PathEscape(ids[0]), http.StatusFound)
}
