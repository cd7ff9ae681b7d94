package daemon

import (
	"context"
	_ "embed"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/go-kit/log/level"

	"github.com/llmprobe/llmprobe/sim"
)

// demoConfig is the embedded default: probe the built-in simulated engine.
//
//go:embed demo.yml
var demoConfig string

const demoURLPlaceholder = "{{SIM_URL}}"

// startDemo starts the simulated engine on a loopback port and points the
// demo configuration at it.
func (d *Daemon) startDemo() error {
	cfg := sim.DefaultConfig()
	cfg.Seed = 1
	cfg.PrefixCacheTokens = 1 << 20 // as vLLM's automatic prefix caching: the demo's conversations show it
	engine, err := sim.New(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		engine.Close()
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := engine.Serve(ctx, ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			level.Error(d.logger).Log("msg", "simulated engine stopped", "err", err)
		}
	}()
	d.closeDemo = func() {
		cancel()
		wg.Wait()
		engine.Close()
	}
	url := "http://" + ln.Addr().String()
	d.demo = []byte(strings.ReplaceAll(demoConfig, demoURLPlaceholder, url))
	level.Info(d.logger).Log("msg", "no --config.file: running on the embedded demo target \"sim\", a built-in simulated engine",
		"sim_url", url,
		"hint", "to probe a real endpoint, run: llmprobe --config.file=llmprobe.yml (see docs/configuration.md)")
	return nil
}
