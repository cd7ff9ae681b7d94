package plan

import (
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/prometheus/client_golang/prometheus"
)

// Safe holds the running plan. Reloads are serialized: each loads,
// compares, applies and swaps before the next begins, so what Get returns
// is always what was applied last.
type Safe struct {
	reload sync.Mutex // held for a whole Reload

	mu  sync.RWMutex
	cfg *Plan

	reloadSuccess   prometheus.Gauge
	reloadTimestamp prometheus.Gauge
}

// NewSafeConfig registers the reload metrics with reg.
func NewSafe(reg prometheus.Registerer) *Safe {
	sc := &Safe{
		reloadSuccess: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "llmprobe_config_last_reload_successful",
			Help: "Whether the last configuration reload attempt was successful.",
		}),
		reloadTimestamp: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "llmprobe_config_last_reload_success_timestamp_seconds",
			Help: "Timestamp of the last successful configuration reload.",
		}),
	}
	if reg != nil {
		reg.MustRegister(sc.reloadSuccess, sc.reloadTimestamp)
	}
	return sc
}

// Get returns the running plan; callers must not modify it.
func (sc *Safe) Get() *Plan {
	sc.mu.RLock()
	defer sc.mu.RUnlock()
	return sc.cfg
}

// Reload calls load and, when it returns a plan that is not config.Equal
// to the running one (its configuration, or a file it read), passes it to
// apply and then makes it the running one. A failed load keeps the running
// plan; an unchanged one is not applied again, so schedules keep their
// rhythm. It reports whether the plan changed.
func (sc *Safe) Reload(load func() (*Plan, error), apply func(*Plan)) (changed bool, err error) {
	sc.reload.Lock()
	defer sc.reload.Unlock()
	cfg, err := load()
	if err != nil {
		sc.reloadSuccess.Set(0)
		return false, err
	}
	if changed = !config.Equal(cfg, sc.Get()); changed {
		apply(cfg)
		sc.mu.Lock()
		sc.cfg = cfg
		sc.mu.Unlock()
	}
	sc.reloadSuccess.Set(1)
	sc.reloadTimestamp.Set(float64(time.Now().UnixNano()) / 1e9)
	return changed, nil
}
