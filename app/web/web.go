// Package web serves llmprobe's pages: the landing page with each target and
// its recent probes, one probe's log, and the burst reports with charts.
package web

import (
	"bytes"
	"cmp"
	"embed"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/common/version"

	"github.com/llmprobe/llmprobe/app/web/chart"
	"github.com/llmprobe/llmprobe/app/web/history"
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/lib/figure"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report/store"
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
	// ms0 is ms where 0 is a measured value, not a missing one.
	"ms0": func(d time.Duration) string {
		return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64) + " ms"
	},
	"ago":    func(t time.Time) string { return time.Since(t).Round(time.Second).String() + " ago" },
	"since":  func(t time.Time) string { return time.Since(t).Round(time.Second).String() },
	"ok":     func(r *prober.Result) bool { return r.Outcome == prober.OutcomeSuccess && r.Good },
	"pct":    func(v any) string { return scaled(v, 100, 1, "%") },
	"msOf":   pageMs,
	"num":    func(v any) string { return scaled(v, 1, 2, "") },
	"every":  func(d time.Duration) string { return d.String() },
	"pvalue": pValue,
	"fig":    scaled,
	"f1":     func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
	"mid":    func(a, b float64) float64 { return (a + b) / 2 },
	"plus":   func(a, b float64) float64 { return a + b },
	"utc":    func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.000 UTC") },
	"gpus":   gpuNames,
	"orNA":   func(v, none string) string { return cmp.Or(v, none) },
	"tokens": func(r *prober.Result) string {
		switch {
		case r.TokenSource != "":
			return strconv.Itoa(r.OutputTokens) + " (from " + string(r.TokenSource) + ")"
		case r.Outcome != prober.OutcomeSuccess:
			return "n/a (the request failed)"
		}
		return "n/a"
	},
}

// pValue formats a test's p-value, or "n/a" where no test ran.
func pValue(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*p, 'g', 3, 64)
}

// valueOf is a report's number (float64 or *float64); false when it has
// no samples behind it (nil).
func valueOf(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case *float64:
		if x != nil {
			return *x, true
		}
	}
	return 0, false
}

// scaled is v scaled with digits decimals and unit, or "n/a".
func scaled(v any, scale float64, digits int, unit string) string {
	f, ok := valueOf(v)
	if !ok {
		return "n/a"
	}
	return strconv.FormatFloat(scale*f, 'f', digits, 64) + unit
}

// pageMs is a latency in seconds as the pages print it (figure.PageMs), or
// "n/a".
func pageMs(v any) string {
	f, ok := valueOf(v)
	if !ok {
		return "n/a"
	}
	return figure.PageMs(f)
}

var pages = template.Must(template.New("").Funcs(pageFuncs).ParseFS(templateFiles, "templates/*.html"))

// Options is what the pages read.
type Options struct {
	Logger  log.Logger
	Targets *target.Set
	// Schedules lists the canary schedules that run; nil shows none.
	Schedules     func() []config.Pair
	Store         *store.Store
	TelemetryPath string
	// Recent and Failures bound the probes kept per target and scenario.
	Recent, Failures int
	// Requests bounds the results of any traffic, canary and burst, kept
	// to be found by request id (the id exemplars carry).
	Requests int
	// Comparisons says each always-on comparison in a line; nil shows none.
	Comparisons func() []string
	// Now is the clock the last hour's trends are read at; nil is time.Now.
	Now func() time.Time
}

// Site is the set of pages. It keeps the recent probes it is given through
// Observe.
type Site struct {
	opts    Options
	history *history.History

	mu    sync.Mutex
	pairs map[[2]string]bool // configured canary pairs; nil before Configure
	// ratios is each configured scenario's SLO target_ratio.
	ratios map[string]float64
	// lastSuccess is when each target last answered a canary well.
	lastSuccess map[string]time.Time
	// burstCache is the summary of each burst's newest report, by id.
	burstCache map[string]*burstCell
	// upgradeBursts are the bursts with schedule on_engine_change;
	// lastUpgrade their last upgrade run, read again only when a newer
	// report is stored.
	upgradeBursts map[string]bool
	lastUpgrade   map[string]upgradeCell
}

// New returns the pages over opts.
func New(opts Options) *Site {
	if opts.Logger == nil {
		opts.Logger = log.NewNopLogger()
	}
	if opts.Schedules == nil {
		opts.Schedules = func() []config.Pair { return nil }
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Site{opts: opts, history: history.New(opts.Recent, opts.Failures, opts.Requests), lastSuccess: map[string]time.Time{}}
}

// Register adds the pages to mux: /, /probe, /bursts, /bursts/<id> (HTML),
// /bursts/<id>.json and /bursts/latest?burst=NAME (a redirect to the newest).
func (s *Site) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /probe", s.probePage)
	mux.HandleFunc("GET /bursts", s.burstsPage)
	mux.HandleFunc("GET /bursts/latest", s.latestReport)
	mux.HandleFunc("GET /bursts/{file}", s.burstReport)
	mux.HandleFunc("GET /{$}", s.landingPage)
}

// Observe keeps a finished probe for the landing page, unless its pair is no
// longer configured (a request in flight when its pair was removed). A
// burst's and a comparison's requests are kept only to be found by request id.
func (s *Site) Observe(r *prober.Result) {
	if r.Outcome == prober.OutcomeCancelled {
		return // llmprobe stopped it: nothing to show about the target
	}
	if r.Traffic == prober.TrafficBurst || r.Traffic == prober.TrafficComparison {
		s.history.ObserveRequest(r)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pairs == nil || s.pairs[[2]string{r.Target, r.Scenario}] {
		s.history.Observe(r)
		s.noteSuccess(r)
	}
}

// Configure takes a new configuration: it forgets the probes of (target,
// scenario) pairs cfg no longer has, and reads each scenario's target ratio.
func (s *Site) Configure(cfg *config.Config) {
	pairs := map[[2]string]bool{}
	for _, p := range cfg.CanaryPairs() {
		pairs[[2]string{p.Target, p.Scenario}] = true
	}
	ratios := map[string]float64{}
	for _, sc := range cfg.Scenarios {
		ratios[sc.Name] = sc.SLO.TargetRatio
	}
	targets := map[string]bool{}
	for _, t := range cfg.Targets {
		targets[t.Name] = true
	}
	upgrades := map[string]bool{}
	for _, b := range cfg.Bursts {
		upgrades[b.Name] = b.Schedule.OnEngineChange != nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pairs, s.ratios, s.upgradeBursts = pairs, ratios, upgrades
	for name := range s.lastSuccess {
		if !targets[name] {
			delete(s.lastSuccess, name)
		}
	}
	s.history.Forget(func(t, sc string) bool { return pairs[[2]string{t, sc}] })
}

// render writes a page whole, or a 500 that says why: never half a page
// with a 200.
func (s *Site) render(w http.ResponseWriter, page string, data any) {
	s.renderStatus(w, http.StatusOK, page, data)
}

func (s *Site) renderStatus(w http.ResponseWriter, code int, page string, data any) {
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, page, data); err != nil {
		level.Error(s.opts.Logger).Log("msg", "rendering a page", "page", page, "err", err)
		http.Error(w, "rendering "+page+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = buf.WriteTo(w)
}

type targetRow struct {
	Name, URL, API, Model, Engine, EngineVersion, Server, InfoError string
	Confirmed                                                       time.Time
	State                                                           target.State
}

// OlderFailures are the pair's kept failures and misses older than its
// recent probes: one still among those is marked in their table, not
// listed twice.
func (p *pairRow) OlderFailures() []*history.Entry {
	if len(p.Recent) == 0 {
		return p.Failures
	}
	var older []*history.Entry
	for _, e := range p.Failures {
		if e.ID < p.Recent[len(p.Recent)-1].ID {
			older = append(older, e)
		}
	}
	return older
}

// trendRow is one canary pair's last hour.
type trendRow struct {
	Target, Scenario string
	chart.TrendRow
}

// pairRow is one canary schedule, or a pair that has results and no
// schedule any more (a burst's target, say).
type pairRow struct {
	history.Pair
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
		row := &pairRow{Pair: history.Pair{Target: p.Target, Scenario: p.Scenario}, Interval: p.Interval}
		pairs[[2]string{p.Target, p.Scenario}] = row
		rows = append(rows, row)
	}
	for _, h := range s.history.Snapshot(s.opts.Now()) {
		if row := pairs[[2]string{h.Target, h.Scenario}]; row != nil {
			row.Pair = h
			continue
		}
		rows = append(rows, &pairRow{Pair: h})
	}
	ver := version.Version
	if ver == "" {
		ver = "dev (built without make)"
	}
	summary, burstErr := s.summary(rows)
	apis := map[string]config.API{}
	for _, t := range targets {
		apis[t.Name] = config.API(t.API)
	}
	trends := make([]trendRow, 0, len(rows))
	for _, p := range rows {
		trends = append(trends, trendRow{Target: p.Target, Scenario: p.Scenario, TrendRow: chart.Trend(p.Trend, apis[p.Target])})
	}
	s.render(w, "landing.html", map[string]any{
		"Version":       ver,
		"Summary":       summary,
		"BurstError":    burstErr,
		"Refresh":       refreshSeconds,
		"Window":        s.opts.Recent,
		"Targets":       targets,
		"TargetErrors":  s.opts.Targets.Errors(),
		"Pairs":         rows,
		"Trends":        trends,
		"TelemetryPath": s.opts.TelemetryPath,
		"Comparisons":   s.comparisons(),
	})
}

func (s *Site) comparisons() []string {
	if s.opts.Comparisons == nil {
		return nil
	}
	return s.opts.Comparisons()
}

// probeView is what probe.html shows: the result and what is derived
// from it, one field per section that needs one.
type probeView struct {
	*history.Entry
	Timeline Timeline
	Split    []splitRow
	// TimingsNA says why the answer carried no engine timings.
	TimingsNA string
}

// probeMissing is what probe-missing.html shows.
type probeMissing struct {
	ID                         string
	ByRequestID                bool
	Recent, Failures, Requests int
	Held                       int
	Oldest                     time.Time
}

// probePage serves /probe?id=: a probe's number (the landing page's
// links) or its X-Request-Id (an exemplar's trace_id).
func (s *Site) probePage(w http.ResponseWriter, r *http.Request) {
	raw := r.URL.Query().Get("id")
	var (
		e  *history.Entry
		ok bool
	)
	// A request id is 32 digits long, a probe number at most 20.
	byRequestID := isRequestID(raw)
	n, err := strconv.ParseUint(raw, 10, 64)
	switch {
	case byRequestID:
		raw = strings.ToLower(raw)
		e, ok = s.history.ByRequestID(raw)
	case err == nil:
		e, ok = s.history.Get(n)
	default:
		http.Error(w, "id must be a probe number or a request id (32 hex digits, the X-Request-Id and an exemplar's trace_id)", http.StatusBadRequest)
		return
	}
	if !ok {
		held, oldest := s.history.Holding()
		recent, failures, requests := s.history.Bounds()
		s.renderStatus(w, http.StatusNotFound, "probe-missing.html", probeMissing{
			ID: raw, ByRequestID: byRequestID, Recent: recent, Failures: failures, Requests: requests,
			Held: held, Oldest: oldest,
		})
		return
	}
	s.render(w, "probe.html", probeView{Entry: e, Timeline: TimelineOf(e.Result), Split: splitRows(e.Result), TimingsNA: s.timingsNA(e.Result)})
}

// timingsNA says why r carried no engine timings, with the way to get
// them only where its target's engine has them; "" when it carried some.
func (s *Site) timingsNA(r *prober.Result) string {
	switch {
	case r.Engine != nil:
		return ""
	case r.Outcome != prober.OutcomeSuccess:
		return "n/a: the request failed before an answer could carry them"
	case s.opts.Targets == nil:
		return "n/a: the answer carried none"
	}
	for _, c := range s.opts.Targets.Clients() {
		if t := c.Target(); t.Name == r.Target {
			asked := t.ExtraBody["include_metrics"] == true // false asks for none
			return "n/a: " + prober.WhyNoTimings(c.Info().Engine, asked)
		}
	}
	return "n/a: the answer carried none (its target is no longer configured)"
}

// isRequestID reports whether id has the shape of llmprobe's request ids:
// 128 bits in hex, a W3C trace id.
func isRequestID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for _, c := range id {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
