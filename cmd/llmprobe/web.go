package main

import (
	_ "embed"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"time"

	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/version"

	"github.com/llmprobe/llmprobe/prober"
)

//go:embed landing.html
var landingHTML string

//go:embed probe.html
var probeHTML string

var pageFuncs = template.FuncMap{
	"ms": func(d time.Duration) string {
		if d == 0 {
			return "–"
		}
		return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64) + " ms"
	},
	"ago": func(t time.Time) string { return time.Since(t).Round(time.Second).String() + " ago" },
	"ok":  func(r *prober.Result) bool { return r.Outcome == prober.OutcomeSuccess && r.Good },
}

var (
	landingTmpl = template.Must(template.New("landing").Funcs(pageFuncs).Parse(landingHTML))
	probeTmpl   = template.Must(template.New("probe").Funcs(pageFuncs).Parse(probeHTML))
)

func (d *daemon) routes(telemetryPath string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(telemetryPath, promhttp.HandlerFor(d.reg, promhttp.HandlerOpts{EnableOpenMetrics: true, ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("/-/healthy", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "Healthy")
	})
	mux.HandleFunc("/-/ready", func(w http.ResponseWriter, _ *http.Request) {
		if !d.ready.Load() {
			http.Error(w, "Not ready", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "Ready")
	})
	mux.HandleFunc("/-/reload", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost && r.Method != http.MethodPut {
			w.Header().Set("Allow", "POST, PUT")
			http.Error(w, "use POST to reload", http.StatusMethodNotAllowed)
			return
		}
		if err := d.reload(); err != nil {
			http.Error(w, "reload failed, the running configuration stays: "+err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprintln(w, "Reloaded")
	})
	mux.HandleFunc("/config", func(w http.ResponseWriter, _ *http.Request) {
		cfg := d.safe.Get()
		if cfg == nil {
			http.Error(w, "no configuration loaded", http.StatusServiceUnavailable)
			return
		}
		out, err := cfg.Redacted()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write(out)
	})
	mux.HandleFunc("/probe", d.probePage)
	mux.HandleFunc("GET /bursts", d.burstsPage)
	mux.HandleFunc("GET /bursts/{file}", d.burstReport)
	mux.HandleFunc("/{$}", d.landingPage)
	return mux
}

type targetRow struct {
	Name, URL, API, Model, Engine, EngineVersion, Server, InfoError string
}

func (d *daemon) landingPage(w http.ResponseWriter, _ *http.Request) {
	var rows []targetRow
	for _, c := range d.targets.Clients() {
		info := c.Info()
		t := c.Target()
		rows = append(rows, targetRow{
			Name: t.Name, URL: t.URL, API: string(t.API), Model: c.Model(),
			Engine: info.Engine, EngineVersion: info.EngineVersion, Server: info.Server, InfoError: info.ModelsError,
		})
	}
	ver := version.Version
	if ver == "" {
		ver = "dev (built without make)"
	}
	data := map[string]any{
		"Version":       ver,
		"Targets":       rows,
		"TargetErrors":  d.targets.Errors(),
		"History":       d.history.Snapshot(),
		"TelemetryPath": "/metrics",
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := landingTmpl.Execute(w, data); err != nil {
		level.Error(d.logger).Log("msg", "landing page", "err", err)
	}
}

func (d *daemon) probePage(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseUint(r.URL.Query().Get("id"), 10, 64)
	if err != nil {
		http.Error(w, "id must be a probe number", http.StatusBadRequest)
		return
	}
	e, ok := d.history.Get(id)
	if !ok {
		http.Error(w, "probe not found (the history keeps only recent probes)", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := probeTmpl.Execute(w, e); err != nil {
		level.Error(d.logger).Log("msg", "probe page", "err", err)
	}
}
