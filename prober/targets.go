package prober

import (
	"context"
	"maps"
	"sort"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/llmprobe/llmprobe/config"
)

// Targets owns one Client per configured target, refreshes each target's
// info (/v1/models, version, Server header) on its own schedule, and follows
// each target's state from the requests it is told about (Observe), logging
// when a target goes down, comes back, or fails in a new way.
type Targets struct {
	logger log.Logger

	mu      sync.Mutex
	clients map[string]*managedClient
	errs    map[string]string
	wg      sync.WaitGroup
}

type managedClient struct {
	*Client
	cancel context.CancelFunc
}

// NewTargets returns an empty set.
func NewTargets(logger log.Logger) *Targets {
	return &Targets{logger: logger, clients: map[string]*managedClient{}, errs: map[string]string{}}
}

// Apply brings the clients in line with cfg and returns them by name. A target
// whose client can't be built (a missing CA file, say) is logged, reported by
// Errors, and left out; the others carry on.
func (t *Targets) Apply(ctx context.Context, cfg *config.Config) map[string]*Client {
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.errs)
	keep := map[string]bool{}
	for _, tc := range cfg.Targets {
		keep[tc.Name] = true
		if old, ok := t.clients[tc.Name]; ok && config.Equal(old.target, tc) {
			continue
		}
		if old, ok := t.clients[tc.Name]; ok {
			old.cancel()
			old.Close()
			delete(t.clients, tc.Name)
		}
		c, err := NewClient(tc)
		if err != nil {
			level.Error(t.logger).Log("msg", "target left out", "target", tc.Name, "err", err)
			t.errs[tc.Name] = err.Error()
			continue
		}
		cctx, cancel := context.WithCancel(ctx)
		t.clients[tc.Name] = &managedClient{Client: c, cancel: cancel}
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			t.refreshLoop(cctx, c)
		}()
	}
	for name, c := range t.clients {
		if !keep[name] {
			c.cancel()
			c.Close()
			delete(t.clients, name)
		}
	}
	out := make(map[string]*Client, len(t.clients))
	for name, c := range t.clients {
		out[name] = c.Client
	}
	return out
}

// Clients returns the clients sorted by target name.
func (t *Targets) Clients() []*Client {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]*Client, 0, len(t.clients))
	for _, c := range t.clients {
		out = append(out, c.Client)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].target.Name < out[j].target.Name })
	return out
}

// Observe takes a finished request; results of targets no longer
// configured are dropped.
func (t *Targets) Observe(r *Result) {
	t.mu.Lock()
	c := t.clients[r.Target]
	t.mu.Unlock()
	if c != nil {
		c.observe(r, t.logger)
	}
}

// Errors returns the targets left out by the last Apply, with the reason.
func (t *Targets) Errors() map[string]string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.errs)
}

// Stop ends every refresh loop.
func (t *Targets) Stop() {
	t.mu.Lock()
	for name, c := range t.clients {
		c.cancel()
		c.Close()
		delete(t.clients, name)
	}
	t.mu.Unlock()
	t.wg.Wait()
}

func (t *Targets) refreshLoop(ctx context.Context, c *Client) {
	interval := c.target.InfoInterval.Std()
	lastErr := ""
	for {
		info := c.RefreshInfo(ctx)
		if ctx.Err() != nil {
			return
		}
		// A change is worth a line; the same failure every refresh is not.
		switch {
		case info.ModelsError != "" && info.ModelsError != lastErr:
			level.Warn(t.logger).Log("msg", "target info unavailable; the last known engine and version stay", "target", c.target.Name, "status", info.ModelsStatus, "err", info.ModelsError)
		case info.ModelsError == "" && lastErr != "":
			level.Info(t.logger).Log("msg", "target info available again", "target", c.target.Name, "engine", info.Engine, "engine_version", info.EngineVersion)
		default:
			level.Debug(t.logger).Log("msg", "target info", "target", c.target.Name, "engine", info.Engine, "engine_version", info.EngineVersion, "models", len(info.Models), "err", info.ModelsError)
		}
		lastErr = info.ModelsError
		wait := interval
		if info.ModelsError != "" {
			// A target still starting up: ask again sooner.
			wait = min(interval, 15*time.Second)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}
