package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"golang.org/x/term"

	"github.com/llmprobe/llmprobe/app/gate"
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/push"
	"github.com/llmprobe/llmprobe/shard"
)

type gateCommand struct {
	cmd         *kingpin.CmdClause
	configFile  *string
	burst       *string
	output      *string
	junit       *string
	markdown    *string
	storagePath *string
	baseline    *string
	gpu         *bool
	targetURL   *string
	model       *string
	rate        *float64
	rateSet     bool
	duration    *time.Duration
	durationSet bool
	shard       *string
	start       *string
	verbose     *bool
	push        push.Flags
}

func newGateCommand(app *kingpin.Application) *gateCommand {
	cmd := app.Command("gate", "Run one burst (or its sweep) now; exit 0 if every gate passed, 1 if the target was measured and a gate failed, 2 on a usage or config error, 3 if the target could not be measured, the report not written or the --baseline is not comparable.")
	c := &gateCommand{cmd: cmd}
	c.configFile = cmd.Flag("config.file", "llmprobe configuration file.").Required().String()
	c.burst = cmd.Flag("burst", "Name of the burst to run.").Required().String()
	c.output = cmd.Flag("output", "Write the report JSON here too.").String()
	c.junit = cmd.Flag("output.junit", "Write the verdicts here as JUnit XML: one test case per gate, failures with their reason (written on every exit but 2).").PlaceHolder("FILE").String()
	c.markdown = cmd.Flag("output.markdown", "Write a Markdown summary here, for CI step summaries: --output.markdown=\"$GITHUB_STEP_SUMMARY\" (written on every exit but 2; never implicitly).").PlaceHolder("FILE").String()
	c.storagePath = cmd.Flag("storage.path", "Folder of burst reports, relative to the working directory, as the daemon's --storage.path (run from the daemon's folder, gate shares its history): the previous report for the regression verdict, and where this one is kept, unless flags override the burst; empty keeps none and reads none.").Default("data").String()
	c.baseline = cmd.Flag("baseline", "Report file (as --output writes it) to compare with, instead of the burst's previous report; binding: one of another model or request set fails the run (exit 3), another target or URL is compared and said.").String()
	c.gpu = cmd.Flag("collector.gpu", "Record the node's GPU facts and energy per token in the report (NVML).").Default("true").Bool()
	c.targetURL = cmd.Flag("target.url", "Send the burst to this URL instead of its target's, for this run; the target's http_client_config (auth, TLS) goes with it.").PlaceHolder("URL").String()
	c.model = cmd.Flag("target.model", "Request this model instead of the target's, for this run.").PlaceHolder("MODEL").String()
	c.rate = cmd.Flag("rate", "Arrival rate in requests per second for this run; replaces a sweep by this one rate.").IsSetByUser(&c.rateSet).PlaceHolder("RATE").Float64()
	c.duration = cmd.Flag("duration", "Length of the measured part for this run, instead of the burst's duration or request count.").IsSetByUser(&c.durationSet).PlaceHolder("DURATION").Duration()
	c.shard = cmd.Flag("burst.shard", "Run only this replica's share i/N of the burst: arrival n of the seeded schedule when n % N == i. Every shard needs the same --burst.start; `llmprobe report merge` makes one report of the N shards' reports.").PlaceHolder("i/N").String()
	c.start = cmd.Flag("burst.start", "Count the schedule from this instant (RFC 3339, like 2026-06-01T12:00:00Z) instead of now: the same in every shard; within the next hour.").PlaceHolder("TIME").String()
	c.verbose = cmd.Flag("verbose", "Print every detail of the report (percentile intervals, the client's error bound, the TTFT split, the turns, the engine's view), not only the verdict, the gates and p50/p90/p99; the report files always have them.").Bool()
	c.push = push.AddFlags(cmd, push.JobGate)
	return c
}

func (c *gateCommand) run() int {
	ctx, stop := signalContext()
	defer stop()
	shard, err := shard.Parse(*c.shard)
	if err != nil {
		fmt.Fprintf(os.Stderr, "llmprobe gate: --burst.shard: %v\n", err)
		return gate.UsageError.ExitCode()
	}
	var start time.Time
	if *c.start != "" {
		if start, err = time.Parse(time.RFC3339Nano, *c.start); err != nil {
			fmt.Fprintf(os.Stderr, "llmprobe gate: --burst.start: %q is not an RFC 3339 time like 2026-06-01T12:00:00Z\n", *c.start)
			return gate.UsageError.ExitCode()
		}
	}
	pusher, err := c.push.Pusher()
	if err != nil {
		fmt.Fprintf(os.Stderr, "llmprobe gate: %v\n", err)
		return gate.UsageError.ExitCode()
	}
	o := config.Override{URL: *c.targetURL, Model: *c.model}
	if c.rateSet {
		o.Rate = c.rate
	}
	if c.durationSet {
		o.Duration = c.duration
	}
	return gate.Run(ctx, gate.Options{
		ConfigFile: *c.configFile, Burst: *c.burst, Override: o,
		Output: *c.output, JUnit: *c.junit, Markdown: *c.markdown,
		StoragePath: *c.storagePath, Baseline: *c.baseline, GPU: *c.gpu,
		Shard: shard, Start: start, Verbose: *c.verbose, Push: pusher,
		Stdout: os.Stdout, Stderr: os.Stderr,
		// Progress goes to stderr, so stderr decides: a CI log gets lines.
		Terminal: term.IsTerminal(int(os.Stderr.Fd())),
	}).ExitCode()
}

// signalContext is a context that SIGINT or SIGTERM ends with the signal's
// name as the cause: the burst stops with that reason and its report is
// still written. stop releases it.
func signalContext() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-sigs:
			cancel(fmt.Errorf("interrupted by %s", s))
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		cancel(nil)
	}
}
