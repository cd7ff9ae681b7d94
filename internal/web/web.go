// Package web serves llmprobe's pages: the landing page with each target and
// its recent probes, one probe's log, and the burst reports with charts.
package web

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/common/version"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/target"
)

//go:embed templates/*.html
var templateFiles embed.FS

var pageFuncs = template.FuncMap{
	"ms": func(d time.Duration) string {
		if d == 0 {
			return "–"
		}
		return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64) + " ms"
	},
	"ago":   func(t time.Time) string { return time.Since(t).Round(time.Second).String() + " ago" },
	"since": func(t time.Time) string { return time.Since(t).Round(time.Second).String() },
	"ok":    func(r *prober.Result) bool { return r.Outcome == prober.OutcomeSuccess && r.Good },
	"pct":   func(v any) string { return figure(v, 100, 1, "%") },
	"msOf":  func(v any) string { return figure(v, 1000, 1, " ms") },
	"num":   func(v any) string { return figure(v, 1, 2, "") },
	"every": func(d time.Duration) string { return d.String() },
}

// figure formats a report's number (float64 or *float64) scaled, or "n/a"
// when it has no samples behind it.
func figure(v any, scale float64, digits int, unit string) string {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case *float64:
		if x == nil {
			return "n/a"
		}
		f = *x
	default:
		return "n/a"
	}
	return strconv.FormatFloat(scale*f, 'f', digits, 64) + unit
}

var pages = template.Must(template.New("").Funcs(pageFuncs).ParseFS(templateFiles, "templates/*.html"))

// Options is what the pages read.
type Options struct {
	Logger  log.Logger
	Targets *target.Set
	// Schedules lists the canary schedules that run; nil shows none.
	Schedules     func() []config.Pair
	Store         *report.Store
	TelemetryPath string
	// Recent and Failures bound the probes kept per target and scenario.
	Recent, Failures int
}

// Site is the set of pages. It keeps the recent probes it is given through
// Observe.
type Site struct {
	opts    Options
	history *history

	mu    sync.Mutex
	pairs map[[2]string]bool // configured canary pairs; nil before Configure
}

// New returns the pages over opts.
func New(opts Options) *Site {
	if opts.Logger == nil {
		opts.Logger = log.NewNopLogger()
	}
	if opts.Schedules == nil {
		opts.Schedules = func() []config.Pair { return nil }
	}
	return &Site{opts: opts, history: newHistory(opts.Recent, opts.Failures)}
}

// Register adds the pages to mux: /, /probe, /bursts and /bursts/<id>.json.
func (s *Site) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /probe", s.probePage)
	mux.HandleFunc("GET /bursts", s.burstsPage)
	mux.HandleFunc("GET /bursts/{file}", s.burstReport)
	mux.HandleFunc("GET /{$}", s.landingPage)
}

// Observe keeps a finished probe for the landing page, unless its pair is no
// longer configured (a request in flight when its pair was removed).
func (s *Site) Observe(r *prober.Result) {
	if r.Outcome == prober.OutcomeCancelled {
		return // llmprobe stopped it: nothing to show about the target
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pairs == nil || s.pairs[[2]string{r.Target, r.Scenario}] {
		s.history.observe(r)
	}
}

// Configure forgets the probes of (target, scenario) pairs cfg no longer has.
func (s *Site) Configure(cfg *config.Config) {
	pairs := map[[2]string]bool{}
	for _, p := range cfg.CanaryPairs() {
		pairs[[2]string{p.Target, p.Scenario}] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pairs = pairs
	s.history.forget(func(t, sc string) bool { return pairs[[2]string{t, sc}] })
}

// render writes a page whole, or a 500 that says why: never half a page
// with a 200.
func (s *Site) render(w http.ResponseWriter, page string, data any) {
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, page, data); err != nil {
		level.Error(s.opts.Logger).Log("msg", "rendering a page", "page", page, "err", err)
		http.Error(w, "rendering "+page+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = buf.WriteTo(w)
}

type targetRow struct {
	Name, URL, API, Model, Engine, EngineVersion, Server, InfoError string
	Confirmed                                                       time.Time
	State                                                           target.State
}

// pairRow is one canary schedule, or a pair that has results and no
// schedule any more (a burst's target, say).
type pairRow struct {
	pairEntries
	Interval time.Duration
}

func (s *Site) landingPage(w http.ResponseWriter, _ *http.Request) {
	var targets []targetRow
	for _, c := range s.opts.Targets.Clients() {
		info := c.Info()
		t := c.Target()
		targets = append(targets, targetRow{
			Name: t.Name, URL: t.URL, API: string(t.API), Model: c.Model(),
			Engine: info.Engine, EngineVersion: info.EngineVersion, Server: info.Server, InfoError: info.ModelsError,
			Confirmed: info.Confirmed, State: s.opts.Targets.State(t.Name),
		})
	}
	pairs := map[[2]string]*pairRow{}
	var rows []*pairRow
	for _, p := range s.opts.Schedules() {
		row := &pairRow{pairEntries: pairEntries{Target: p.Target, Scenario: p.Scenario}, Interval: p.Interval}
		pairs[[2]string{p.Target, p.Scenario}] = row
		rows = append(rows, row)
	}
	for _, h := range s.history.snapshot() {
		if row := pairs[[2]string{h.Target, h.Scenario}]; row != nil {
			row.pairEntries = h
			continue
		}
		rows = append(rows, &pairRow{pairEntries: h})
	}
	ver := version.Version
	if ver == "" {
		ver = "dev (built without make)"
	}
	s.render(w, "landing.html", map[string]any{
		"Version":       ver,
		"Targets":       targets,
		"TargetErrors":  s.opts.Targets.Errors(),
		"Pairs":         rows,
		"TelemetryPath": s.opts.TelemetryPath,
	})
}

func (s *Site) probePage(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseUint(r.URL.Query().Get("id"), 10, 64)
	if err != nil {
		http.Error(w, "id must be a probe number", http.StatusBadRequest)
		return
	}
	e, ok := s.history.get(id)
	if !ok {
		http.Error(w, "probe not found (the history keeps only recent probes)", http.StatusNotFound)
		return
	}
	s.render(w, "probe.html", e)
}
