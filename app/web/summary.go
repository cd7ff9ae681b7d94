package web

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/enginemetrics"
	"github.com/llmprobe/llmprobe/lib/figure"
	"github.com/llmprobe/llmprobe/prober"
	reportrender "github.com/llmprobe/llmprobe/report/render"
	"github.com/llmprobe/llmprobe/target"
)

// refreshSeconds is how often the landing page reloads itself.
const refreshSeconds = 10

// summaryRow is one target on the landing page's summary: is it up, what
// runs there, when it last answered well, its SLOs and its last burst.
type summaryRow struct {
	Name                 string
	State, StateClass    string
	Reason               string // why it is down
	Since                time.Time
	Engine               string
	EngineMetrics        engineCell // the last engine metrics read; empty without engine_metrics
	LastSuccess          time.Time  // zero: never
	SLO                  []sloCell
	Burst                *burstCell
	NotProbed, NotReason string
}

// engineCell is how the last read of a target's engine metrics page went.
type engineCell struct{ Text, Class string }

// sloCell is one scenario's SLO state over the recent canary probes.
type sloCell struct {
	Scenario, State, Class, Detail string
}

// burstCell is the newest burst report of a target.
type burstCell struct {
	ID, Burst, Target string
	End               time.Time
	Badge             verdict
}

// engineText is "engine version", or n/a with the reason.
func engineText(info prober.Info) string {
	if info.Confirmed.IsZero() {
		if info.ModelsError != "" {
			return "n/a (never read: /v1/models fails, see Targets)" // the error is in the Targets table
		}
		return "n/a (not read yet)"
	}
	ver := info.EngineVersion
	if ver == "" {
		ver = "version n/a (the engine does not report one)"
	}
	return info.Engine + " " + ver
}

// landingFigures are the engine figures a target's row shows, where its
// family has them: llama.cpp's counters give tpot and prefill per token,
// TGI's histograms queue, tpot and e2e.
var landingFigures = []string{enginemetrics.MetricTTFT, enginemetrics.MetricQueue, enginemetrics.MetricPrefill,
	enginemetrics.MetricPrefillPerToken, enginemetrics.MetricTPOT, enginemetrics.MetricE2E}

// engineMetricsText says how the last read of the engine's metrics page
// went: when, and its figures or why there are none.
func engineMetricsText(es target.EngineState) (string, string) {
	p := es.Last
	switch {
	case p == nil:
		return "engine metrics: not read yet", "muted"
	case p.Error != "":
		return fmt.Sprintf("engine metrics: read failed %s: %s", p.Time.Format("15:04:05"), p.Error), "bad"
	}
	text := fmt.Sprintf("engine metrics: read %s in %s", p.Time.Format("15:04:05"), figure.Ms(p.Duration))
	w := es.Window
	switch {
	case w == nil:
		return text + "; figures after the next read", "ok"
	case w.Error != "":
		return text + "; n/a: " + w.Error, "muted"
	}
	text += fmt.Sprintf("; %s, server-wide over the last interval:", w.Family)
	var figs []string
	for _, m := range landingFigures {
		f, ok := w.Lookup(m)
		if !ok || f.NA != "" || f.Mean == nil {
			continue
		}
		// The mean is exact; a p99 is only as precise as its bucket.
		s := fmt.Sprintf("%s mean %s", m, msFigure(*f.Mean, true))
		if q, ok := f.Quantile("p99"); ok {
			s += " (p99 in " + q.Bucket() + ")"
		}
		figs = append(figs, s)
	}
	if len(figs) == 0 {
		figs = append(figs, "no request finished")
	}
	text += " " + strings.Join(figs, ", ")
	for _, g := range w.Gauges {
		if g.NA == "" && g.After != nil {
			text += fmt.Sprintf("; %s %g", g.Metric, *g.After)
		}
	}
	if sd := reportrender.SpecDecodeText(w); sd != "" {
		text += "; " + sd
	}
	if l := reportrender.LoRAText(w); l != "" {
		text += "; " + l
	}
	if kv := w.KVTransfer; kv != nil && kv.NA == "" && kv.Mean != nil {
		text += fmt.Sprintf("; kv transfer mean %s over %.0f transfers (disaggregated prefill, the engine's aggregate)", msFigure(*kv.Mean, true), *kv.Count)
	}
	return text, "ok"
}

// sloCells judges each scenario's recent canary probes against its target ratio.
func sloCells(pairs []*pairRow, target string, ratios map[string]float64) []sloCell {
	var cells []sloCell
	for _, p := range pairs {
		if p.Target != target {
			continue
		}
		c := sloCell{Scenario: p.Scenario, State: "n/a (no samples)", Class: "muted"}
		good := 0
		for _, e := range p.Recent {
			if e.Outcome == prober.OutcomeSuccess && e.Good {
				good++
			}
		}
		want, configured := ratios[p.Scenario]
		switch {
		case len(p.Recent) == 0:
		case !configured:
			c.State, c.Detail = "n/a (the scenario is no longer configured)", fmt.Sprintf("%d of %d good", good, len(p.Recent))
		default:
			got := float64(good) / float64(len(p.Recent))
			c.State, c.Class = "meeting", "ok"
			if got < want {
				c.State, c.Class = "violating", "bad"
			}
			c.Detail = fmt.Sprintf("%d of %d good (%.1f%%), target %.1f%%", good, len(p.Recent), 100*got, 100*want)
		}
		cells = append(cells, c)
	}
	return cells
}

// lastBursts returns each target's newest burst report, read from the store
// once per report id and remembered.
func (s *Site) lastBursts() (map[string]*burstCell, error) {
	lists, err := s.opts.Store.List()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]*burstCell{}
	out := map[string]*burstCell{}
	for _, ids := range lists {
		if len(ids) == 0 {
			continue
		}
		c := s.burstCache[ids[0]]
		if c == nil {
			rep, err := s.opts.Store.Load(ids[0])
			if err != nil {
				return nil, err
			}
			c = &burstCell{ID: rep.ID, Burst: rep.Burst, Target: rep.Target, End: rep.End, Badge: burstVerdict(rep)}
		}
		seen[c.ID] = c
		if old := out[c.Target]; old == nil || c.End.After(old.End) {
			out[c.Target] = c
		}
	}
	s.burstCache = seen // only what the store still lists: bounded by it
	return out, nil
}

// summary builds the landing page's summary rows.
func (s *Site) summary(pairs []*pairRow) ([]summaryRow, string) {
	bursts, err := s.lastBursts()
	burstErr := ""
	if err != nil {
		burstErr = "the burst reports cannot be read: " + err.Error()
	}
	s.mu.Lock()
	ratios, lastOK := s.ratios, map[string]time.Time{}
	for k, v := range s.lastSuccess {
		lastOK[k] = v
	}
	s.mu.Unlock()
	var rows []summaryRow
	for _, c := range s.opts.Targets.Clients() {
		name := c.Target().Name
		st := s.opts.Targets.State(name)
		row := summaryRow{Name: name, Engine: engineText(c.Info()), LastSuccess: lastOK[name], Burst: bursts[name],
			SLO: sloCells(pairs, name, ratios), State: "no request yet", StateClass: "muted"}
		if es, ok := s.opts.Targets.Engine(name); ok {
			row.EngineMetrics.Text, row.EngineMetrics.Class = engineMetricsText(es)
		}
		if last := st.Last; last != nil {
			row.Since = st.Since
			row.State, row.StateClass = "up", "ok"
			if !st.Up {
				row.State, row.StateClass, row.Reason = "down", "bad", last.FailureText()
			} else if done := last.Sched.Add(last.E2E); done.After(row.LastSuccess) {
				row.LastSuccess = done // a burst's request, which the history does not see
			}
		}
		rows = append(rows, row)
	}
	for name, e := range s.opts.Targets.Errors() {
		rows = append(rows, summaryRow{Name: name, NotProbed: "not probed", NotReason: e})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	return rows, burstErr
}

// noteSuccess remembers when a target last answered well; s.mu is held.
func (s *Site) noteSuccess(r *prober.Result) {
	if r.Outcome != prober.OutcomeSuccess {
		return
	}
	done := r.Sched.Add(r.E2E)
	if done.After(s.lastSuccess[r.Target]) {
		s.lastSuccess[r.Target] = done
	}
}
