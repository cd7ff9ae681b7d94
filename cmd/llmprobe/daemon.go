package main

import (
	"context"
	"sync/atomic"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmprobe/llmprobe/collector"
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
)

// daemon wires configuration, targets, schedules, metrics and history.
type daemon struct {
	ctx     context.Context
	logger  log.Logger
	reg     *prometheus.Registry
	safe    *config.SafeConfig
	targets *prober.Targets
	canary  *prober.Canary
	probe   *collector.Probe
	history *prober.History
	store   *prober.Store
	bursts  *collector.Bursts
	burster *prober.BurstScheduler
	reload  func() error
	ready   atomic.Bool
	shard   config.Shard
}

// observers fans a result out to metrics and history.
type observers []prober.Observer

func (o observers) Observe(r *prober.Result) {
	for _, x := range o {
		x.Observe(r)
	}
}

func newDaemon(ctx context.Context, logger log.Logger, reg *prometheus.Registry, recent, failures int, storagePath string, gpu *collector.GPU) *daemon {
	d := &daemon{
		ctx:     ctx,
		logger:  logger,
		reg:     reg,
		safe:    config.NewSafeConfig(reg),
		targets: prober.NewTargets(logger),
		probe:   collector.NewProbe(),
		history: prober.NewHistory(recent, failures),
		store:   prober.NewStore(storagePath),
		shard:   config.Shard{Index: 0, Count: 1},
		bursts:  collector.NewBursts(),
	}
	d.canary = prober.NewCanary(ctx, logger, observers{d.probe, d.history}, d.probe)
	var gpuProbe prober.GPUProbe
	if gpu != nil {
		gpuProbe = gpu
	}
	d.burster = prober.NewBurstScheduler(ctx, logger, d.store, gpuProbe, d.probe, d.probe, d.bursts.Set)
	reg.MustRegister(d.probe, collector.NewTargetInfo(d.targets.Clients), d.bursts)
	return d
}

// apply makes the running configuration take effect.
func (d *daemon) apply() {
	cfg := d.safe.Get().ForShard(d.shard)
	clients := d.targets.Apply(d.ctx, cfg)
	d.probe.Configure(cfg)
	d.canary.Apply(cfg, clients)
	d.bursts.Configure(cfg)
	// After a restart the last reports bring back the last-burst gauges.
	for _, b := range cfg.Bursts {
		if rep, err := d.store.Latest(b.Name); err == nil && rep != nil {
			d.bursts.Set(rep)
		}
	}
	d.burster.Apply(cfg, clients)
	pairs := map[[2]string]bool{}
	for _, p := range cfg.CanaryPairs() {
		pairs[[2]string{p.Target, p.Scenario}] = true
	}
	d.history.Forget(func(t, s string) bool { return pairs[[2]string{t, s}] })
}

func (d *daemon) stop() {
	d.burster.Stop()
	d.canary.Stop()
	d.targets.Stop()
}
