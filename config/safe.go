package config

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// SafeConfig holds the running configuration. Reloads are serialized: each
// loads, compares, applies and swaps before the next begins, so what Get
// returns is always what was applied last.
type SafeConfig struct {
	reload sync.Mutex // held for a whole Reload

	mu  sync.RWMutex
	cfg *Config

	reloadSuccess   prometheus.Gauge
	reloadTimestamp prometheus.Gauge
}

// NewSafeConfig registers the reload metrics with reg.
func NewSafeConfig(reg prometheus.Registerer) *SafeConfig {
	sc := &SafeConfig{
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

// Get returns the running configuration; callers must not modify it.
func (sc *SafeConfig) Get() *Config {
	sc.mu.RLock()
	defer sc.mu.RUnlock()
	return sc.cfg
}

// Reload calls load and, when it returns a configuration that is not Equal
// to the running one, passes it to apply and then makes it the running one.
// A failed load keeps the running configuration; an unchanged one is not
// applied again, so schedules keep their rhythm. It reports whether the
// configuration changed.
func (sc *SafeConfig) Reload(load func() (*Config, error), apply func(*Config)) (changed bool, err error) {
	sc.reload.Lock()
	defer sc.reload.Unlock()
	cfg, err := load()
	if err != nil {
		sc.reloadSuccess.Set(0)
		return false, err
	}
	if changed = !Equal(cfg, sc.Get()); changed {
		apply(cfg)
		sc.mu.Lock()
		sc.cfg = cfg
		sc.mu.Unlock()
	}
	sc.reloadSuccess.Set(1)
	sc.reloadTimestamp.Set(float64(time.Now().UnixNano()) / 1e9)
	return changed, nil
}
