package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/alecthomas/kingpin/v2"

	"github.com/llmprobe/llmprobe/app/gate"
	"github.com/llmprobe/llmprobe/app/web"
	"github.com/llmprobe/llmprobe/push"
	"github.com/llmprobe/llmprobe/report/store"
)

type reportShowCommand struct {
	cmd    *kingpin.CmdClause
	file   *string
	output *string
}

type reportMergeCommand struct {
	cmd      *kingpin.CmdClause
	files    *[]string
	output   *string
	baseline *string
	push     push.Flags
}

func newReportCommands(app *kingpin.Application) (*reportShowCommand, *reportMergeCommand) {
	parent := app.Command("report", "Read and merge burst reports.")
	cmd := parent.Command("show", "Write a burst report (JSON, as `gate --output` or the report store writes it) as one HTML page that opens in any browser without a server; exit 2 if the file is missing or not a report.")
	show := &reportShowCommand{
		cmd:    cmd,
		file:   cmd.Arg("file", "The report's JSON file.").Required().String(),
		output: cmd.Flag("output", "Where to write the HTML page (default: FILE with .html in place of .json).").String(),
	}
	cmd = parent.Command("merge", "Make one report of a burst split over replicas from the reports of all its shards (`gate --burst.shard=i/N --output`), with exact percentiles over their union, and judge it; exit 0 if every gate passed, 1 if one failed, 2 if the files are not every shard of one run of one burst (or --baseline is not a report), 3 if nothing was measured, the report could not be written or the --baseline is not comparable.")
	merge := &reportMergeCommand{
		cmd:      cmd,
		files:    cmd.Arg("files", "The shards' report files, one per shard, in any order.").Required().Strings(),
		output:   cmd.Flag("output", "Where to write the merged report JSON.").Required().String(),
		baseline: cmd.Flag("baseline", "Report file to compare with for the regression verdict and max_regression gates (the burst's previous report, whole or merged); without it they are skipped.").PlaceHolder("FILE").String(),
	}
	merge.push = push.AddFlags(cmd, push.JobGate) // the merged report is the split gate's run
	return show, merge
}

func (c *reportMergeCommand) run(stdout, stderr io.Writer) int {
	pusher, err := c.push.Pusher()
	if err != nil {
		fmt.Fprintf(stderr, "llmprobe report merge: %v\n", err)
		return gate.UsageError.ExitCode()
	}
	return gate.Merge(gate.MergeOptions{Files: *c.files, Output: *c.output, Baseline: *c.baseline, Push: pusher, Stdout: stdout, Stderr: stderr}).ExitCode()
}

func (c *reportShowCommand) run(stdout, stderr io.Writer) int {
	rep, err := store.Read(*c.file)
	if err != nil {
		fmt.Fprintf(stderr, "llmprobe report show: %v\n", err)
		return 2
	}
	out := *c.output
	if out == "" {
		out = strings.TrimSuffix(*c.file, filepath.Ext(*c.file)) + ".html"
		if out == *c.file {
			out += ".html" // never over the report itself
		}
	}
	var page bytes.Buffer
	if err := web.WriteReport(&page, rep); err != nil {
		fmt.Fprintf(stderr, "llmprobe report show: %v\n", err)
		return 1
	}
	if err := os.WriteFile(out, page.Bytes(), 0o644); err != nil {
		fmt.Fprintf(stderr, "llmprobe report show: writing the page: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, out)
	return 0
}
