package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/alecthomas/kingpin/v2"

	"github.com/llmprobe/llmprobe/internal/daemon"
)

type gateCommand struct {
	cmd         *kingpin.CmdClause
	configFile  *string
	burst       *string
	output      *string
	storagePath *string
	gpu         *bool
}

func newGateCommand(app *kingpin.Application) *gateCommand {
	cmd := app.Command("gate", "Run one burst (or its sweep) now; exit 0 if every gate passed, 1 if one failed, 2 on a usage or config error.")
	return &gateCommand{
		cmd:         cmd,
		configFile:  cmd.Flag("config.file", "llmprobe configuration file.").Required().String(),
		burst:       cmd.Flag("burst", "Name of the burst to run.").Required().String(),
		output:      cmd.Flag("output", "Write the report JSON here too.").String(),
		storagePath: cmd.Flag("storage.path", "Folder of burst reports: the previous report for the regression verdict, and where this one is kept; empty keeps none.").Default("data").String(),
		gpu:         cmd.Flag("collector.gpu", "Record the node's GPU facts and energy per token in the report (NVML).").Default("true").Bool(),
	}
}

func (c *gateCommand) run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return daemon.Gate(ctx, daemon.GateOptions{
		ConfigFile: *c.configFile, Burst: *c.burst, Output: *c.output, StoragePath: *c.storagePath, GPU: *c.gpu,
		Stdout: os.Stdout, Stderr: os.Stderr,
	})
}
