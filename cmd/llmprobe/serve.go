package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/prometheus/exporter-toolkit/web/kingpinflag"

	"github.com/llmprobe/llmprobe/collector"
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/sim"
)

// demoConfig is the embedded default: probe the built-in simulated engine.
//
//go:embed demo.yml
var demoConfig string

const demoURLPlaceholder = "{{SIM_URL}}"

type serveCommand struct {
	cmd           *kingpin.CmdClause
	configFile    *string
	configCheck   *bool
	telemetryPath *string
	webFlags      *web.FlagConfig
	historyRecent *int
	historyFailed *int
	storagePath   *string
	gpu           *bool
	gpuTimeout    *time.Duration
	shard         *string
}

func newServeCommand(app *kingpin.Application) *serveCommand {
	cmd := app.Command("serve", "Run the prober and exporter (default).").Default()
	c := &serveCommand{
		cmd:           cmd,
		configFile:    cmd.Flag("config.file", "llmprobe configuration file. Without it, llmprobe probes its built-in simulated engine.").String(),
		configCheck:   cmd.Flag("config.check", "Validate the configuration file and exit.").Bool(),
		telemetryPath: cmd.Flag("web.telemetry-path", "Path under which to expose metrics.").Default("/metrics").String(),
		historyRecent: cmd.Flag("history.recent", "Recent results kept per target and scenario for the landing page.").Default("20").Int(),
		historyFailed: cmd.Flag("history.failures", "Failed results kept per target and scenario for the landing page.").Default("20").Int(),
		storagePath:   cmd.Flag("storage.path", "Folder for burst reports; empty keeps none.").Default("data").String(),
		gpu:           cmd.Flag("collector.gpu", "Export the node's GPUs through NVML (--no-collector.gpu to turn off).").Default("true").Bool(),
		gpuTimeout:    cmd.Flag("collector.gpu.timeout", "Longest a scrape waits on NVML.").Default("2s").Duration(),
		shard:         cmd.Flag("shard", "Probe only this replica's share of the targets, i/N (0-based), by a stable hash of the target name.").Default("0/1").String(),
	}
	c.webFlags = kingpinflag.AddFlags(cmd, defaultListenAddress)
	return c
}

func (c *serveCommand) run(logger log.Logger, webLogger *slog.Logger) int {
	if *c.configCheck {
		if *c.configFile == "" {
			fmt.Fprintln(os.Stderr, "llmprobe: --config.check needs --config.file")
			return 2
		}
		if _, err := config.LoadFile(*c.configFile); err != nil {
			fmt.Fprintf(os.Stderr, "%v\n", err)
			return 1
		}
		fmt.Printf("%s: configuration is valid\n", *c.configFile)
		return 0
	}

	shard, err := config.ParseShard(*c.shard)
	if err != nil {
		fmt.Fprintf(os.Stderr, "llmprobe: --shard: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	level.Info(logger).Log("msg", "starting llmprobe", "version", version.Info(), "build_context", version.BuildContext())

	reg := prometheus.NewRegistry()
	reg.MustRegister(
		versioncollector.NewCollector("llmprobe"),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	var gpu *collector.GPU
	if *c.gpu {
		gpu = collector.NewGPU(logger, *c.gpuTimeout)
		gpu.Start()
		defer gpu.Stop()
		reg.MustRegister(gpu)
	}
	d := newDaemon(ctx, logger, reg, *c.historyRecent, *c.historyFailed, *c.storagePath, gpu)
	d.shard = shard
	defer d.stop()

	load := func() (bool, error) { return d.safe.Reload(*c.configFile) }
	if *c.configFile == "" {
		simURL, closeSim, err := startDemoSim(logger)
		if err != nil {
			level.Error(logger).Log("msg", "cannot start the built-in simulated engine", "err", err)
			return 1
		}
		defer closeSim()
		demo := []byte(strings.ReplaceAll(demoConfig, demoURLPlaceholder, simURL))
		load = func() (bool, error) { return d.safe.ReloadBytes(demo, "embedded demo config") }
		level.Info(logger).Log("msg", "no --config.file: running on the embedded demo target \"sim\", a built-in simulated engine",
			"sim_url", simURL,
			"hint", "to probe a real endpoint, run: llmprobe --config.file=llmprobe.yml (see docs/configuration.md)")
	}
	d.reload = func() error {
		changed, err := load()
		if err != nil {
			level.Error(logger).Log("msg", "configuration reload failed; the running configuration stays", "err", err)
			return err
		}
		if changed {
			d.apply()
			level.Info(logger).Log("msg", "configuration loaded", "targets", len(d.safe.Get().Targets), "scenarios", len(d.safe.Get().Scenarios),
				"shard", fmt.Sprintf("%d/%d", shard.Index, shard.Count), "targets_in_shard", len(d.safe.Get().ForShard(shard).Targets))
		}
		return nil
	}
	if err := d.reload(); err != nil {
		return 1
	}

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				_ = d.reload()
			}
		}
	}()

	srv := &http.Server{Handler: d.routes(*c.telemetryPath), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- web.ListenAndServe(srv, c.webFlags, webLogger) }()
	d.ready.Store(true)
	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			level.Error(logger).Log("msg", "web server failed", "err", err)
			return 1
		}
	case <-ctx.Done():
		level.Info(logger).Log("msg", "shutting down")
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
	}
	return 0
}

// startDemoSim starts the simulated engine on a loopback port.
func startDemoSim(logger log.Logger) (string, func(), error) {
	cfg := sim.DefaultConfig()
	cfg.Seed = 1
	engine, err := sim.New(cfg)
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		engine.Close()
		return "", nil, err
	}
	srv := &http.Server{Handler: engine.Handler(), ReadHeaderTimeout: 10 * time.Second}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			level.Error(logger).Log("msg", "simulated engine stopped", "err", err)
		}
	}()
	closeFn := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		engine.Close()
		wg.Wait()
	}
	return "http://" + ln.Addr().String(), closeFn, nil
}
