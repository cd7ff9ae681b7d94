package main

import (
	"fmt"
	"os"

	"github.com/alecthomas/kingpin/v2"
	"golang.org/x/term"

	"github.com/llmprobe/llmprobe/app/gate"
	"github.com/llmprobe/llmprobe/push"
)

type compareCommand struct {
	cmd                          *kingpin.CmdClause
	configFile, burst            *string
	baseline, candidate          sideFlags
	rounds                       *int
	rate                         *float64
	rateSet                      bool
	output, junit, markdown, web *string
	push                         push.Flags
}

// sideFlags are one side's flags: --baseline, --baseline.url, --baseline.model.
type sideFlags struct {
	target, url, model *string
}

func newCompareCommand(app *kingpin.Application) *compareCommand {
	cmd := app.Command("compare", "Send one burst's identical requests to a baseline and a candidate target in alternating rounds (ABBA…) and judge the p50 latencies, goodput, the share of answers passing their checks where a scenario checks them (golden, quality) and each tail max_regression names, each by its 95 % interval over the rounds against its tolerance; exit 0 if every judged metric is shown within its tolerance, 1 if one is shown worse beyond it, 2 on a usage or config error, 3 if a side could not be measured or the sample shows neither (not enough evidence).")
	c := &compareCommand{cmd: cmd}
	c.configFile = cmd.Flag("config.file", "llmprobe configuration file.").Required().String()
	c.burst = cmd.Flag("burst", "Name of the burst whose requests both sides get (its seed, arrivals, lengths, warmup).").Required().String()
	c.baseline = addSideFlags(cmd, "baseline")
	c.candidate = addSideFlags(cmd, "candidate")
	c.rounds = cmd.Flag("rounds", "Runs per side, even: round k sends baseline then candidate when k is even, candidate then baseline when odd (A B B A …), so drift cancels. The rounds are the replicates each interval rests on: 2 leave one degree of freedom (a t of 12.7); 6 are the default.").Default("6").Int()
	c.rate = cmd.Flag("rate", "Arrival rate in requests per second for both sides, instead of the burst's; a burst that sweeps rates needs one.").IsSetByUser(&c.rateSet).PlaceHolder("RATE").Float64()
	c.output = cmd.Flag("output", "Write the comparison JSON here.").PlaceHolder("FILE").String()
	c.junit = cmd.Flag("output.junit", "Write the verdicts here as JUnit XML: one test case per metric (written on every exit but 2).").PlaceHolder("FILE").String()
	c.markdown = cmd.Flag("output.markdown", "Write a Markdown summary here, for CI step summaries (written on every exit but 2).").PlaceHolder("FILE").String()
	c.web = cmd.Flag("output.html", "Write an HTML page here: the verdicts and both sides' distributions.").PlaceHolder("FILE").String()
	c.push = push.AddFlags(cmd, push.JobCompare)
	return c
}

func addSideFlags(cmd *kingpin.CmdClause, side string) sideFlags {
	return sideFlags{
		target: cmd.Flag(side, "Configured target that is the "+side+" (default: the burst's target); its http_client_config (auth, TLS) goes with it.").PlaceHolder("TARGET").String(),
		url:    cmd.Flag(side+".url", "Send the "+side+"'s requests to this URL instead of its target's.").PlaceHolder("URL").String(),
		model:  cmd.Flag(side+".model", "Request this model from the "+side+" instead of its target's.").PlaceHolder("MODEL").String(),
	}
}

func (f sideFlags) side(name string) gate.Side {
	return gate.Side{Name: name, Target: *f.target, URL: *f.url, Model: *f.model}
}

func (c *compareCommand) run() int {
	ctx, stop := signalContext()
	defer stop()
	pusher, err := c.push.Pusher()
	if err != nil {
		fmt.Fprintf(os.Stderr, "llmprobe compare: %v\n", err)
		return gate.UsageError.ExitCode()
	}
	var rate *float64
	if c.rateSet {
		rate = c.rate
	}
	return gate.Compare(ctx, gate.CompareOptions{
		Rate:       rate,
		ConfigFile: *c.configFile, Burst: *c.burst,
		Sides:  [2]gate.Side{c.baseline.side("baseline"), c.candidate.side("candidate")},
		Rounds: *c.rounds,
		Output: *c.output, JUnit: *c.junit, Markdown: *c.markdown, HTML: *c.web,
		Stdout: os.Stdout, Stderr: os.Stderr, Push: pusher,
		Terminal: term.IsTerminal(int(os.Stderr.Fd())),
	}).ExitCode()
}
