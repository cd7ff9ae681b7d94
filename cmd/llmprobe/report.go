package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/alecthomas/kingpin/v2"

	"github.com/llmprobe/llmprobe/internal/web"
	"github.com/llmprobe/llmprobe/report"
)

type reportShowCommand struct {
	cmd    *kingpin.CmdClause
	file   *string
	output *string
}

func newReportCommand(app *kingpin.Application) *reportShowCommand {
	cmd := app.Command("report", "Read burst reports.").Command("show", "Write a burst report (JSON, as `gate --output` or the report store writes it) as one HTML page that opens in any browser without a server; exit 2 if the file is missing or not a report.")
	return &reportShowCommand{
		cmd:    cmd,
		file:   cmd.Arg("file", "The report's JSON file.").Required().String(),
		output: cmd.Flag("output", "Where to write the HTML page (default: FILE with .html in place of .json).").String(),
	}
}

func (c *reportShowCommand) run(stdout, stderr io.Writer) int {
	rep, err := readReport(*c.file)
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

// readReport reads a report file and says plainly what is wrong with one
// that is not a report.
func readReport(path string) (*report.Report, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s does not exist; give a report file, as `llmprobe gate --output` writes it or one under the storage path (data/<burst>/<id>.json)", path)
	}
	if err != nil {
		return nil, err
	}
	var rep report.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("%s is not a burst report: %v", path, err)
	}
	if rep.ID == "" || rep.Burst == "" {
		return nil, fmt.Errorf("%s is not a burst report: it has no \"id\" or no \"burst\"", path)
	}
	return &rep, nil
}
