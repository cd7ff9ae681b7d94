package config

import (
	"crypto/sha256"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// SafeConfig holds the running configuration and swaps it on reload. A reload
// that fails keeps the running configuration.
type SafeConfig struct {
	mu       sync.RWMutex
	cfg      *Config
	checksum [sha256.Size]byte

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

// Reload loads path. It reports whether the configuration changed; an
// unchanged file is not swapped, so probes keep their schedules.
func (sc *SafeConfig) Reload(path string) (changed bool, err error) {
	cfg, raw, err := loadFile(path)
	return sc.apply(cfg, raw, err)
}

// ReloadBytes is Reload for configuration held in memory (the embedded demo).
func (sc *SafeConfig) ReloadBytes(data []byte, name string) (changed bool, err error) {
	cfg, err := Parse(data, name)
	return sc.apply(cfg, data, err)
}

func (sc *SafeConfig) apply(cfg *Config, raw []byte, err error) (bool, error) {
	if err != nil {
		sc.reloadSuccess.Set(0)
		return false, err
	}
	// Raw bytes, not the marshalled form: secrets marshal as <secret>, and a
	// changed token must count as a change.
	sum := sha256.Sum256(raw)
	sc.mu.Lock()
	changed := sc.cfg == nil || sum != sc.checksum
	if changed {
		sc.cfg, sc.checksum = cfg, sum
	}
	sc.mu.Unlock()
	sc.reloadSuccess.Set(1)
	sc.reloadTimestamp.Set(float64(time.Now().UnixNano()) / 1e9)
	return changed, nil
}
