package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/prometheus/exporter-toolkit/web/kingpinflag"

	"github.com/llmprobe/llmprobe/app/daemon"
	"github.com/llmprobe/llmprobe/lib/redact"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/shard"
	"github.com/llmprobe/llmprobe/target"
)

// maxHistoryRequests bounds --history.requests: at most about 240 MiB of
// results with answers of a thousand tokens.
const maxHistoryRequests = 20_000

type serveCommand struct {
	cmd           *kingpin.CmdClause
	configFile    *string
	configCheck   *bool
	telemetryPath *string
	webFlags      *web.FlagConfig
	historyRecent *int
	historyFailed *int
	historyReqs   *int
	storagePath   *string
	gpu           *bool
	gpuTimeout    *time.Duration
	shard         *string
	classic       *bool
	healthWindow  *time.Duration
	healthGrace   *time.Duration
}

func newServeCommand(app *kingpin.Application) *serveCommand {
	cmd := app.Command("serve", "Run the prober and exporter (default).").Default()
	c := &serveCommand{
		cmd:           cmd,
		configFile:    cmd.Flag("config.file", "llmprobe configuration file. Without it, llmprobe probes its built-in simulated engine.").String(),
		configCheck:   cmd.Flag("config.check", "Validate the configuration file and exit: 0 when valid, 2 with every error (file:line: field: what is wrong) when not.").Bool(),
		telemetryPath: cmd.Flag("web.telemetry-path", "Path under which to expose metrics.").Default("/metrics").String(),
		historyRecent: cmd.Flag("history.recent", "Recent results kept per target and scenario for the landing page.").Default("20").Int(),
		historyFailed: cmd.Flag("history.failures", "Failed results kept per target and scenario for the landing page.").Default("20").Int(),
		historyReqs: cmd.Flag("history.requests", fmt.Sprintf("Last requests of any traffic, canary and burst, kept for their page at /probe?id=<request id> (an exemplar's trace_id); each costs at most 4 KiB and 8 B per output token (0 to %d).", maxHistoryRequests)).
			Default("1000").Int(),
		storagePath: cmd.Flag("storage.path", "Folder for burst reports; empty keeps none.").Default("data").String(),
		gpu:         cmd.Flag("collector.gpu", "Export the node's GPUs through NVML (--no-collector.gpu to turn off).").Default("true").Bool(),
		gpuTimeout:  cmd.Flag("collector.gpu.timeout", "Longest a scrape waits on NVML.").Default("2s").Duration(),
		shard:       cmd.Flag("shard", "Probe only this replica's share of the targets, i/N (0-based), by a stable hash of the target name.").Default("0/1").String(),
		classic: cmd.Flag("metrics.classic-buckets", "Give the probe histograms classic buckets beside their native ones; --no-metrics.classic-buckets leaves native histograms only, for a Prometheus that ingests them (about a quarter of the series).").
			Default("true").Bool(),
		healthWindow: cmd.Flag("health.window", "/-/healthy/<target> answers 503 when requests reached the target's engine within this window and none got a token back (1s to 24h).").Default("2m").Duration(),
		healthGrace:  cmd.Flag("health.startup-grace", "/-/healthy/<target> answers 200 for this long after llmprobe begins to follow the target, while the engine loads (0 to 24h).").Default("5m").Duration(),
	}
	c.webFlags = kingpinflag.AddFlags(cmd, defaultListenAddress)
	return c
}

func (c *serveCommand) run(logger log.Logger, webLogger *slog.Logger, secrets *redact.Redactor) int {
	if *c.configCheck {
		if *c.configFile == "" {
			fmt.Fprintln(os.Stderr, "llmprobe: --config.check needs --config.file")
			return 2
		}
		p, err := plan.File(*c.configFile)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%v\n", err)
			return 2 // a configuration error, as in every command
		}
		fmt.Printf("%s: configuration is valid\n", *c.configFile)
		n, rate, bytes := p.CanaryFootprint()
		l := p.Config.Limits
		fmt.Printf("canary: %d schedules, %.4g requests per second, worst-case memory %.1f MiB (limits: %g/s, %s)\n", n, rate, float64(bytes)/(1<<20), l.MaxCanaryRate, l.MaxCanaryMemory)
		for _, b := range p.Bursts {
			fmt.Printf("burst %s: %s (limits: %d requests, %s)\n", b.Name, b.Footprint, l.MaxPlannedRequests, l.MaxBurstMemory)
		}
		for _, b := range p.Bursts {
			for _, w := range b.Unsettled() {
				fmt.Fprintf(os.Stderr, "%s: warning: %s\n", *c.configFile, w)
			}
		}
		return 0
	}
	if n := *c.historyReqs; n < 0 || n > maxHistoryRequests {
		fmt.Fprintf(os.Stderr, "llmprobe: --history.requests: %d is out of range 0 to %d\n", n, maxHistoryRequests)
		return 2
	}
	if w := *c.healthWindow; w < time.Second || w > 24*time.Hour {
		fmt.Fprintf(os.Stderr, "llmprobe: --health.window: %s is out of range 1s to 24h\n", w)
		return 2
	}
	if g := *c.healthGrace; g < 0 || g > 24*time.Hour {
		fmt.Fprintf(os.Stderr, "llmprobe: --health.startup-grace: %s is out of range 0 to 24h\n", g)
		return 2
	}
	shard, err := shard.Parse(*c.shard)
	if err != nil {
		fmt.Fprintf(os.Stderr, "llmprobe: --shard: %v\n", err)
		return 2
	}
	// Lines of the standard log and slog's default, a library's say, come
	// out in the same format as llmprobe's own.
	slog.SetDefault(webLogger)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	d := daemon.New(daemon.Options{
		Logger: logger, WebLogger: webLogger, Secrets: secrets, Web: c.webFlags, TelemetryPath: *c.telemetryPath,
		ConfigFile: *c.configFile, HistoryRecent: *c.historyRecent, HistoryFailures: *c.historyFailed, HistoryRequests: *c.historyReqs,
		StoragePath: *c.storagePath, GPU: *c.gpu, GPUTimeout: *c.gpuTimeout, Shard: shard, NativeHistogramsOnly: !*c.classic,
		TokenFlow: target.TokenFlowOptions{Window: *c.healthWindow, Grace: *c.healthGrace},
	})
	if err := d.Run(ctx); err != nil {
		if errors.Is(err, daemon.ErrConfig) {
			fmt.Fprintln(os.Stderr, err) // file:line per error, one a line
			return 2
		}
		level.Error(logger).Log("msg", "llmprobe stopped", "err", err)
		return 1
	}
	return 0
}
