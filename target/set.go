// Package target keeps one prober.Client per configured target, refreshes
// each target's info on its own schedule, and follows each target's state
// from its requests, logging when it goes down, comes back or fails anew,
// and judging whether its engine still produces tokens (its health check);
// at load it checks the files its clients will read.
package target

import (
	"context"
	"maps"
	"sort"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
)

// Set owns one client per configured target, refreshes each target's info
// (/v1/models, version, Server header) on its own schedule, and follows each
// target's state from the requests it is told about (Observe).
type Set struct {
	logger log.Logger

	mu      sync.Mutex
	clients map[string]*managedClient
	health  map[string]*health // by target name: a client rebuilt by a reload keeps its target's state
	errs    map[string]string
	wg      sync.WaitGroup
	now     func() time.Time // the clock of state changes; tests set it
	// onInfo, when set, takes every refresh's info (the upgrade trigger).
	onInfo func(*prober.Client, prober.Info)
	// clientOpts are given to every client built (its trace sampler).
	clientOpts []prober.Option
}

type managedClient struct {
	*prober.Client
	cancel context.CancelFunc
	engine *engineWatch // nil when the target names no engine_metrics
}

// NewSet returns an empty set whose clients are built with opts.
func NewSet(logger log.Logger, opts ...prober.Option) *Set {
	return &Set{logger: logger, clients: map[string]*managedClient{}, health: map[string]*health{}, errs: map[string]string{}, now: time.Now, clientOpts: opts}
}

// Apply brings the clients in line with cfg and returns them by name. A target
// whose client can't be built (a missing CA file, say) is logged, reported by
// Errors, and left out; the others carry on.
func (t *Set) Apply(ctx context.Context, cfg *config.Config) map[string]*prober.Client {
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.errs)
	keep := map[string]bool{}
	for _, tc := range cfg.Targets {
		keep[tc.Name] = true
		if old, ok := t.clients[tc.Name]; ok && config.Equal(old.Target(), tc) {
			continue
		}
		if old, ok := t.clients[tc.Name]; ok {
			old.cancel()
			old.Close()
			delete(t.clients, tc.Name)
		}
		if t.health[tc.Name] == nil {
			t.health[tc.Name] = newHealth(t.now())
		}
		c, err := prober.NewClient(tc, t.clientOpts...)
		if err != nil {
			level.Error(t.logger).Log("msg", "target left out", "target", tc.Name, "err", err)
			t.errs[tc.Name] = err.Error()
			continue
		}
		cctx, cancel := context.WithCancel(ctx)
		mc := &managedClient{Client: c, cancel: cancel}
		t.clients[tc.Name] = mc
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			t.refreshLoop(cctx, c)
		}()
		if tc.EngineMetrics != nil {
			mc.engine = &engineWatch{}
			t.wg.Add(1)
			go func() {
				defer t.wg.Done()
				engineLoop(cctx, t.logger, c, mc.engine)
			}()
		}
	}
	for name, c := range t.clients {
		if !keep[name] {
			c.cancel()
			c.Close()
			delete(t.clients, name)
		}
	}
	for name := range t.health {
		if !keep[name] {
			delete(t.health, name)
		}
	}
	out := make(map[string]*prober.Client, len(t.clients))
	for name, c := range t.clients {
		out[name] = c.Client
	}
	return out
}

// OnInfo makes every later info refresh call f, from the refreshing
// goroutine; set it before the first Apply.
func (t *Set) OnInfo(f func(*prober.Client, prober.Info)) {
	t.mu.Lock()
	t.onInfo = f
	t.mu.Unlock()
}

// Clients returns the clients sorted by target name.
func (t *Set) Clients() []*prober.Client {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]*prober.Client, 0, len(t.clients))
	for _, c := range t.clients {
		out = append(out, c.Client)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Target().Name < out[j].Target().Name })
	return out
}

// Observe takes a finished request; results of targets no longer
// configured are dropped.
func (t *Set) Observe(r *prober.Result) {
	t.mu.Lock()
	h := t.health[r.Target]
	t.mu.Unlock()
	if h != nil {
		h.observe(r, t.logger, t.now())
	}
}

// State is what the requests to the named target said last.
func (t *Set) State(name string) State {
	t.mu.Lock()
	h := t.health[name]
	t.mu.Unlock()
	if h == nil {
		return State{}
	}
	return h.snapshot()
}

// Errors returns the targets left out by the last Apply, with the reason.
func (t *Set) Errors() map[string]string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.errs)
}

// Stop ends every refresh loop.
func (t *Set) Stop() {
	t.mu.Lock()
	for name, c := range t.clients {
		c.cancel()
		c.Close()
		delete(t.clients, name)
	}
	t.mu.Unlock()
	t.wg.Wait()
}

func (t *Set) refreshLoop(ctx context.Context, c *prober.Client) {
	name := c.Target().Name
	interval := c.Target().InfoInterval.Std()
	lastErr := ""
	for {
		info := c.RefreshInfo(ctx)
		if ctx.Err() != nil {
			return
		}
		t.mu.Lock()
		onInfo := t.onInfo
		t.mu.Unlock()
		if onInfo != nil {
			onInfo(c, info)
		}
		// A change is worth a line; the same failure every refresh is not.
		switch {
		case info.ModelsError != "" && info.ModelsError != lastErr:
			level.Warn(t.logger).Log("msg", "target info unavailable; the last known engine and version stay", "target", name, "status", info.ModelsStatus, "err", info.ModelsError)
		case info.ModelsError == "" && lastErr != "":
			level.Info(t.logger).Log("msg", "target info available again", "target", name, "engine", info.Engine, "engine_version", info.EngineVersion)
		default:
			level.Debug(t.logger).Log("msg", "target info", "target", name, "engine", info.Engine, "engine_version", info.EngineVersion, "models", len(info.Models), "err", info.ModelsError)
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
