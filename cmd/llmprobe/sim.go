package main

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/llmprobe/llmprobe/sim"
)

type simCommand struct {
	cmd    *kingpin.CmdClause
	listen *string
	cfg    *sim.Config
}

func newSimCommand(app *kingpin.Application) *simCommand {
	cmd := app.Command("sim", "Run the simulated OpenAI-compatible inference engine on its own.")
	return &simCommand{
		cmd:    cmd,
		listen: cmd.Flag("sim.listen-address", "Address the simulated engine listens on.").Default(":8000").String(),
		cfg:    sim.AddFlags(cmd),
	}
}

func (c *simCommand) run(logger log.Logger) int {
	engine, err := sim.New(*c.cfg)
	if err != nil {
		level.Error(logger).Log("msg", "invalid simulator settings", "err", err)
		return 2
	}
	defer engine.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Addr: *c.listen, Handler: engine.Handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	level.Info(logger).Log("msg", "simulated engine listening", "address", *c.listen, "model", c.cfg.Model)
	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			level.Error(logger).Log("msg", "simulated engine failed", "err", err)
			return 1
		}
	case <-ctx.Done():
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
	}
	return 0
}
