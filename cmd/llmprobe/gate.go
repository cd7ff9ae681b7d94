package main

import (
	"context"
	"fmt"
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
	baseline    *string
	gpu         *bool
}

func newGateCommand(app *kingpin.Application) *gateCommand {
	cmd := app.Command("gate", "Run one burst (or its sweep) now; exit 0 if every gate passed, 1 if the target was measured and a gate failed, 2 on a usage or config error, 3 if the target could not be measured or the report not written.")
	return &gateCommand{
		cmd:         cmd,
		configFile:  cmd.Flag("config.file", "llmprobe configuration file.").Required().String(),
		burst:       cmd.Flag("burst", "Name of the burst to run.").Required().String(),
		output:      cmd.Flag("output", "Write the report JSON here too.").String(),
		storagePath: cmd.Flag("storage.path", "Folder of burst reports: the previous report for the regression verdict, and where this one is kept; empty keeps none.").Default("data").String(),
		baseline:    cmd.Flag("baseline", "Report file (as --output writes it) to compare with, instead of the burst's previous report.").String(),
		gpu:         cmd.Flag("collector.gpu", "Record the node's GPU facts and energy per token in the report (NVML).").Default("true").Bool(),
	}
}

func (c *gateCommand) run() int {
	// A signal stops the burst with its name as the reason; the report is
	// still written.
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case s := <-sigs:
			cancel(fmt.Errorf("interrupted by %s", s))
		case <-ctx.Done():
		}
	}()
	return daemon.Gate(ctx, daemon.GateOptions{
		ConfigFile: *c.configFile, Burst: *c.burst, Output: *c.output, StoragePath: *c.storagePath, Baseline: *c.baseline, GPU: *c.gpu,
		Stdout: os.Stdout, Stderr: os.Stderr,
	})
}
