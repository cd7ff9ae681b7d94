// Package daemon wires llmprobe's parts together and runs them, with one
// reconciler goroutine that alone loads and applies the configuration.
package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	stdlog "log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/klauspost/compress/gzhttp"
	"github.com/klauspost/compress/gzip"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/common/version"
	toolkit "github.com/prometheus/exporter-toolkit/web"

	"github.com/llmprobe/llmprobe/app/web"
	"github.com/llmprobe/llmprobe/burst"
	"github.com/llmprobe/llmprobe/canary"
	"github.com/llmprobe/llmprobe/collector"
	"github.com/llmprobe/llmprobe/compare"
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/gpu"
	"github.com/llmprobe/llmprobe/lib/logging"
	"github.com/llmprobe/llmprobe/lib/redact"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report/store"
	"github.com/llmprobe/llmprobe/shard"
	"github.com/llmprobe/llmprobe/target"
	"github.com/llmprobe/llmprobe/tracing"
)

// Options are the daemon's flags.
type Options struct {
	Logger log.Logger
	// WebLogger is the bridge exporter-toolkit and the HTTP server log
	// through (logging.Slog over Logger before its ts and caller).
	WebLogger *slog.Logger
	// Secrets learns every loaded configuration's secrets, and masks them
	// in pages, reports and, when it wraps Logger's output, in log lines.
	// Nil makes one that wraps Logger.
	Secrets *redact.Redactor
	// Web holds the listen addresses, TLS and auth; nil listens on :9479.
	Web           *toolkit.FlagConfig
	TelemetryPath string
	// ConfigFile is the configuration; empty runs the embedded demo against
	// the built-in simulated engine.
	ConfigFile                     string
	HistoryRecent, HistoryFailures int
	// HistoryRequests bounds the results of any traffic, canary and burst,
	// kept to be found by request id (an exemplar's trace_id).
	HistoryRequests int
	StoragePath     string
	GPU             bool
	GPUTimeout      time.Duration
	Shard           shard.Shard
	// NativeHistogramsOnly drops the probe histograms' classic buckets
	// (--no-metrics.classic-buckets), for Prometheus servers that ingest
	// native histograms.
	NativeHistogramsOnly bool
	// TokenFlow is the window and startup grace of each target's health
	// check, /-/healthy/<target>.
	TokenFlow target.TokenFlowOptions
}

// Daemon is llmprobe serving: canaries, bursts, metrics and pages.
type Daemon struct {
	opts   Options
	logger log.Logger
	// secrets masks every secret any loaded configuration held.
	secrets *redact.Redactor

	// ctx bounds every schedule and client; Run cancels it when it ends.
	ctx    context.Context
	cancel context.CancelFunc

	reg *prometheus.Registry // every collector but the probe histograms
	// pages are the registries of the /metrics page: reg and the probe
	// histograms', gathered at once.
	pages   []prometheus.Gatherer
	metrics http.Handler
	safe    *plan.Safe
	targets *target.Set
	canary  *canary.Scheduler
	compare *compare.AlwaysOn
	burster *burst.Scheduler
	probe   *collector.Probe
	bursts  *collector.Bursts
	gpu     *gpu.Collector
	tracer  *tracing.Exporter
	store   *store.Store
	site    *web.Site

	demo      []byte // the demo configuration, once its engine listens
	closeDemo func()

	reloads  chan chan error // reload requests, each answered on its channel
	stopped  chan struct{}   // closed when the reconciler is gone: reloads fail from then on
	stopOnce sync.Once
	ready    atomic.Bool
}

// observers fans a result out to metrics and history.
type observers []prober.Observer

func (o observers) Observe(r *prober.Result) {
	for _, x := range o {
		x.Observe(r)
	}
}

// New builds the daemon; Run starts it.
func New(opts Options) *Daemon {
	if opts.Logger == nil {
		opts.Logger = log.NewNopLogger()
	}
	secrets := opts.Secrets
	if secrets == nil {
		secrets = redact.New()
		opts.Logger = secrets.Logger(opts.Logger)
	}
	if opts.WebLogger == nil {
		opts.WebLogger = logging.Slog(opts.Logger, "info")
	}
	if opts.TelemetryPath == "" {
		opts.TelemetryPath = "/metrics"
	}
	if opts.Web == nil {
		addrs, systemd, webConfig := []string{":9479"}, false, ""
		opts.Web = &toolkit.FlagConfig{WebListenAddresses: &addrs, WebSystemdSocket: &systemd, WebConfigFile: &webConfig}
	}
	if opts.Shard.Count == 0 {
		opts.Shard = shard.Shard{Index: 0, Count: 1}
	}
	ctx, cancel := context.WithCancel(context.Background())
	tracer := tracing.New(opts.Logger)
	d := &Daemon{
		opts:    opts,
		logger:  opts.Logger,
		secrets: secrets,
		ctx:     ctx,
		cancel:  cancel,
		reg:     prometheus.NewRegistry(),
		targets: target.NewSet(opts.Logger, prober.WithSampler(tracer)),
		tracer:  tracer,
		probe:   collector.NewProbe(!opts.NativeHistogramsOnly),
		bursts:  collector.NewBursts(),
		store:   store.New(opts.StoragePath, secrets),
		reloads: make(chan chan error),
		stopped: make(chan struct{}),
	}
	d.safe = plan.NewSafe(d.reg)
	d.site = web.New(web.Options{
		Logger: opts.Logger, Targets: d.targets, Store: d.store, TelemetryPath: opts.TelemetryPath,
		Recent: opts.HistoryRecent, Failures: opts.HistoryFailures, Requests: opts.HistoryRequests,
		Schedules:   func() []config.Pair { return d.canary.Running() },
		Comparisons: func() []string { return d.compare.Lines() },
	})
	d.canary = canary.NewScheduler(ctx, opts.Logger, observers{d.probe, d.site, d.targets, d.tracer}, d.probe)
	// A comparison's requests make no probe series (its own families hold
	// its figures) and stay out of the SLO counters; its in-flight requests
	// are counted with traffic="comparison".
	d.compare = compare.NewAlwaysOn(ctx, opts.Logger, observers{d.site, d.targets, d.tracer}, d.probe)
	// The site keeps burst requests too, to be found by the id their
	// exemplars carry.
	runner := burst.Runner{Store: d.store, Observer: observers{d.probe, d.targets, d.site}, Spans: d.tracer, InFlight: d.probe}
	if opts.GPU {
		d.gpu = gpu.New(opts.Logger, opts.GPUTimeout)
		runner.GPU = d.gpu
		d.reg.MustRegister(d.gpu)
	}
	d.burster = burst.NewScheduler(ctx, opts.Logger, runner, d.bursts)
	d.targets.OnInfo(d.burster.TargetInfo)
	d.reg.MustRegister(
		versioncollector.NewCollector("llmprobe"),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collector.NewTargets(d.targets), collector.NewEngine(d.targets), d.bursts, d.probe, d.compare, d.tracer,
		collector.NewCgroup("/"),
	)
	hists := prometheus.NewRegistry()
	hists.MustRegister(d.probe.Histograms())
	d.pages = []prometheus.Gatherer{d.reg, hists}
	d.metrics = metricsHandler(d.pages, opts.Logger)
	return d
}

// metricsHandler serves reg: pageHandler negotiates the format (text,
// OpenMetrics with exemplars, protobuf) as promhttp does and encodes it in
// parallel; gzhttp negotiates gzip, which pageHandler applies at the
// fastest level: compress/gzip at the default level took longer than
// gathering and encoding the page together.
func metricsHandler(regs []prometheus.Gatherer, logger log.Logger) http.Handler {
	gz, err := gzhttp.NewWrapper(gzhttp.CompressionLevel(gzip.BestSpeed), gzhttp.EnableZstd(false))
	if err != nil {
		panic(err) // constant options
	}
	return gz(&pageHandler{regs: regs,
		errorLog: stdlog.New(log.NewStdlibAdapter(level.Error(logger)), "", 0)})
}

// ErrConfig wraps Run's error when the configuration could not be loaded at
// start: a configuration error, on which a command exits 2.
var ErrConfig = errors.New("the configuration could not be loaded")

// Run loads the configuration, starts probing and serves HTTP until ctx
// ends or the server fails. SIGHUP and POST /-/reload reload the
// configuration through Reload.
func (d *Daemon) Run(ctx context.Context) error {
	defer d.stop()
	// Listen for SIGHUP from the start: one that comes while the first load
	// runs waits for the reconciler instead of killing the process.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	level.Info(d.logger).Log("msg", "starting llmprobe", "version", version.Info(), "build_context", version.BuildContext())
	// Bound before anything starts: an address in use stops llmprobe
	// before it probes or runs a burst it could never show.
	listeners, err := listen(d.opts.Web)
	if err != nil {
		return err
	}
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	if d.gpu != nil {
		d.gpu.Start()
	}
	if d.opts.ConfigFile == "" {
		if err := d.startDemo(); err != nil {
			return fmt.Errorf("starting the built-in simulated engine: %w", err)
		}
	}
	if err := d.reload(); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}

	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wg.Add(2)
	go func() {
		defer wg.Done()
		d.reconcile(ctx)
	}()
	go func() {
		defer wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				_ = d.Reload(ctx)
			}
		}
	}()

	srv := &http.Server{Handler: d.routes(), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(d.opts.WebLogger.Handler(), slog.LevelError)} // a TLS handshake error, say
	errc := make(chan error, 1)
	go func() {
		if listeners == nil {
			errc <- toolkit.ListenAndServe(srv, d.opts.Web, d.opts.WebLogger)
			return
		}
		errc <- toolkit.ServeMultiple(listeners, srv, d.opts.Web, d.opts.WebLogger)
	}()
	d.ready.Store(true)
	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("web server: %w", err)
		}
	case <-ctx.Done():
		level.Info(d.logger).Log("msg", "shutting down")
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
		<-errc
	}
	return nil
}

// listen binds every TCP address of --web.listen-address. Systemd's
// sockets, vsock addresses and no address at all are left to
// exporter-toolkit, which serves or refuses them (nil, nil).
func listen(web *toolkit.FlagConfig) ([]net.Listener, error) {
	if (web.WebSystemdSocket != nil && *web.WebSystemdSocket) || len(*web.WebListenAddresses) == 0 {
		return nil, nil
	}
	for _, addr := range *web.WebListenAddresses {
		if strings.HasPrefix(addr, "vsock://") {
			return nil, nil
		}
	}
	var out []net.Listener
	for _, addr := range *web.WebListenAddresses {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			for _, bound := range out {
				_ = bound.Close()
			}
			return nil, fmt.Errorf("--web.listen-address=%s: %w; give another address with --web.listen-address", addr, err)
		}
		out = append(out, l)
	}
	return out, nil
}

// stop ends every schedule and the demo engine.
func (d *Daemon) stop() {
	d.ready.Store(false)
	d.stopReloads()
	d.burster.Stop()
	d.canary.Stop()
	d.compare.Stop()
	d.targets.Stop()
	d.cancel()
	if d.gpu != nil {
		d.gpu.Stop()
	}
	if d.closeDemo != nil {
		d.closeDemo()
	}
	// The spans of the last requests, within a bound: a collector that is
	// down must not hold the shutdown.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.tracer.Shutdown(ctx); err != nil {
		level.Warn(d.logger).Log("msg", "spans still queued at shutdown were not exported", "err", err)
	}
}

func (d *Daemon) stopReloads() { d.stopOnce.Do(func() { close(d.stopped) }) }

var errStopped = errors.New("llmprobe is shutting down")

// Reload asks the reconciler to load and apply the configuration, and waits
// for the result. Requests that arrive while a reload runs are answered
// together by the next one, which reads the file after all of them were made.
func (d *Daemon) Reload(ctx context.Context) error {
	done := make(chan error, 1)
	select {
	case d.reloads <- done:
	case <-ctx.Done():
		return ctx.Err()
	case <-d.stopped:
		return errStopped
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// reconcile is the only goroutine that loads and applies configuration once
// Run has started.
func (d *Daemon) reconcile(ctx context.Context) {
	defer d.stopReloads()
	for {
		select {
		case <-ctx.Done():
			return
		case first := <-d.reloads:
			waiting := []chan error{first}
			for more := true; more; {
				select {
				case r := <-d.reloads:
					waiting = append(waiting, r)
				default:
					more = false
				}
			}
			err := d.reload()
			for _, w := range waiting {
				w <- err
			}
		}
	}
}

// reload loads the configuration and, if it changed, applies it.
func (d *Daemon) reload() error {
	first := d.safe.Get() == nil
	changed, err := d.safe.Reload(d.load, d.apply)
	if err != nil && first {
		level.Error(d.logger).Log("msg", "the configuration could not be loaded; llmprobe stops", "err", err)
		return err
	}
	if err != nil {
		level.Error(d.logger).Log("msg", "configuration reload failed; the running configuration stays", "err", err)
		return err
	}
	if changed {
		cfg := d.safe.Get().Config
		level.Info(d.logger).Log("msg", "configuration loaded", "targets", len(cfg.Targets), "scenarios", len(cfg.Scenarios),
			"shard", fmt.Sprintf("%d/%d", d.opts.Shard.Index, d.opts.Shard.Count), "targets_in_shard", len(d.opts.Shard.Filter(cfg).Targets))
	}
	return nil
}

// load reads the configuration and teaches the redactor its secrets, files'
// contents included, even when it turns out unchanged: a rotated token file
// is masked from the next reload on.
func (d *Daemon) load() (*plan.Plan, error) {
	var p *plan.Plan
	var err error
	if d.opts.ConfigFile == "" {
		p, err = plan.Parse(d.demo, "embedded demo config")
	} else {
		p, err = plan.File(d.opts.ConfigFile)
	}
	if err == nil {
		d.secrets.Add(config.Secrets(p.Config))
	}
	return p, err
}

// apply makes a configuration take effect; SafeConfig calls it before the
// configuration becomes the one /config shows.
func (d *Daemon) apply(full *plan.Plan) {
	p := full.Shard(d.opts.Shard)
	cfg := p.Config
	if err := d.tracer.Configure(cfg); err != nil {
		level.Error(d.logger).Log("msg", "the tracing block's exporter could not be built; the tracing in effect before stays (none at start)", "err", err)
	}
	clients := d.targets.Apply(d.ctx, cfg)
	d.probe.Configure(cfg)
	d.canary.Apply(p, clients)
	d.compare.Apply(p, clients)
	d.bursts.Configure(cfg)
	// After a restart (or for a burst a reload adds) the last stored report
	// brings back the last-burst gauges; bursts with one in memory are not read again.
	for _, b := range cfg.Bursts {
		if d.bursts.Has(b.Name) {
			continue
		}
		rep, err := d.store.Latest(b.Name)
		if err != nil {
			level.Warn(d.logger).Log("msg", "the last report of a burst cannot be read; its gauges stay empty until it runs again", "burst", b.Name, "err", err)
		}
		if rep != nil {
			d.bursts.Restore(rep)
		}
		// The last upgrade verdict stays too, so its alert outlives a restart.
		if b.Schedule.OnEngineChange != nil && (rep == nil || rep.Upgrade == nil) && !d.bursts.HasUpgrade(b.Name) {
			if up, err := d.store.LatestUpgrade(b.Name); err != nil {
				level.Warn(d.logger).Log("msg", "the last upgrade report of a burst cannot be read; its verdict stays empty until the next engine change", "burst", b.Name, "err", err)
			} else if up != nil {
				d.bursts.Restore(up)
			}
		}
	}
	d.burster.Apply(p, clients)
	d.site.Configure(cfg)
}

// routes serves every page through the redactor. /metrics is left out of
// it: its label values come from the configuration's names and from target
// facts the prober has masked already, and a scrape must not be held whole.
func (d *Daemon) routes() http.Handler {
	root := http.NewServeMux()
	root.Handle(d.opts.TelemetryPath, d.metrics)
	mux := http.NewServeMux()
	// /probe?id= is a recent probe's log page; any other /probe is a probe
	// now (/probe?target=).
	probe := d.probeHandler()
	root.Handle("/", d.secrets.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/probe" && !r.URL.Query().Has("id") {
			probe(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})))
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
		if err := d.Reload(r.Context()); err != nil {
			http.Error(w, "reload failed, the running configuration stays: "+err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprintln(w, "Reloaded")
	})
	mux.HandleFunc("/config", func(w http.ResponseWriter, _ *http.Request) {
		running := d.safe.Get()
		if running == nil {
			http.Error(w, "no configuration loaded", http.StatusServiceUnavailable)
			return
		}
		out, err := running.Config.Redacted()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write(out)
	})
	mux.HandleFunc("GET /api/v1/comparisons", d.comparisonsAPI)
	mux.HandleFunc("GET /-/healthy/{target}", d.targetHealth)
	d.site.Register(mux)
	return root
}

// targetHealth is a target's health check for a kubelet or a gateway:
// 503 only when requests reached its engine within the window and no token
// came back; it reads the daemon's state and sends nothing.
func (d *Daemon) targetHealth(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	name := r.PathValue("target")
	tf, ok := d.targets.TokenFlow(name, time.Now(), d.opts.TokenFlow)
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, "no target %q is configured\n", name)
		return
	}
	if !tf.Healthy {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	fmt.Fprintln(w, tf.Reason)
	for _, warning := range tf.Warnings {
		fmt.Fprintln(w, "warning: "+warning)
	}
}

// comparisonsAPI serves each always-on comparison's current decision and
// what it rests on, for rollout controllers' web providers and scripts.
func (d *Daemon) comparisonsAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(struct {
		Comparisons []compare.Status `json:"comparisons"`
	}{d.compare.Statuses()})
}
