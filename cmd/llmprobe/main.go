// Command llmprobe is a Prometheus exporter and synthetic prober for
// OpenAI-compatible inference servers.
package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/common/version"

	"github.com/llmprobe/llmprobe/lib/logging"
	"github.com/llmprobe/llmprobe/lib/redact"
)

const defaultListenAddress = ":9479"

func main() {
	os.Exit(run(os.Args[1:]))
}

// The version from the module's build info when no ldflags stamped one
// (go install, go run): a tag, or a pseudo-version with the commit.
func init() {
	if version.Version != "" {
		return
	}
	version.Version = "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		version.Version = bi.Main.Version
	}
}

// run parses args and runs the chosen command; it returns the exit code.
func run(args []string) int {
	app := kingpin.New("llmprobe", "Prometheus exporter and synthetic prober for OpenAI-compatible LLM inference servers.")
	app.Version(version.Print("llmprobe"))
	app.HelpFlag.Short('h')
	app.UsageTemplate(usageTemplate)
	logFlags := addLogFlags(app)

	serve := newServeCommand(app)
	sim := newSimCommand(app)
	gate := newGateCommand(app)
	cmp := newCompareCommand(app)
	reportShow, reportMerge := newReportCommands(app)

	cmd, err := app.Parse(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "llmprobe: %v (try --help)\n", flagError(app, args, err))
		return 2
	}
	base, err := logging.New(os.Stderr, *logFlags.format, *logFlags.level)
	if err != nil {
		fmt.Fprintf(os.Stderr, "llmprobe: %v\n", err)
		return 2
	}
	// The redactor sits under the caller valuer, so lines name their real caller.
	secrets := redact.New()
	logger := logging.Stamp(secrets.Logger(base))
	switch cmd {
	case serve.cmd.FullCommand():
		return serve.run(logger, logging.Slog(secrets.Logger(base), *logFlags.level), secrets)
	case sim.cmd.FullCommand():
		return sim.run(logger)
	case gate.cmd.FullCommand():
		return gate.run()
	case cmp.cmd.FullCommand():
		return cmp.run()
	case reportShow.cmd.FullCommand():
		return reportShow.run(os.Stdout, os.Stderr)
	case reportMerge.cmd.FullCommand():
		return reportMerge.run(os.Stdout, os.Stderr)
	}
	return 2
}

// usageTemplate is kingpin's, plus the default command's flags on the
// top-level help: `llmprobe --flag` is `llmprobe serve --flag`, so its
// flags belong there.
var usageTemplate = kingpin.DefaultUsageTemplate + `{{if not .Context.SelectedCommand -}}
{{range .App.Commands}}{{if .Default -}}
Flags of {{.FullCommand}}, the default command:
{{.Flags|FlagsToTwoColumns|FormatTwoColumns}}
{{end}}{{end}}{{end -}}
`

type logFlags struct {
	level, format *string
}

func addLogFlags(app *kingpin.Application) *logFlags {
	return &logFlags{
		level:  app.Flag("log.level", "Only log messages with the given severity or above. One of: [debug, info, warn, error]").Default("info").Enum("debug", "info", "warn", "error"),
		format: app.Flag("log.format", "Output format of log messages. One of: [logfmt, json]").Default("logfmt").Enum("logfmt", "json"),
	}
}

// valueForms are what a flag's parser says of a value it cannot read, and
// the form the flag wants instead.
var valueForms = []struct{ says, wants string }{
	{"strconv.ParseFloat", "a number, like 20 or 0.5"},
	{"strconv.ParseInt", "a whole number, like 6"},
	{"strconv.ParseUint", "a whole number, like 6"},
	{"time: ", "a duration, like 500ms, 2s or 1m"},
	{"strconv.ParseBool", "true or false"},
}

// flagError names the flag whose value err refuses, and the form the flag
// wants: kingpin passes on its parser's words ("strconv.ParseFloat:
// parsing "RATE": invalid syntax"), which name neither.
func flagError(app *kingpin.Application, args []string, err error) error {
	msg := err.Error()
	want := ""
	for _, f := range valueForms {
		if strings.Contains(msg, f.says) {
			want = f.wants
		}
	}
	ctx, perr := app.ParseContext(args)
	if want == "" || perr != nil && ctx == nil {
		return err
	}
	for _, el := range ctx.Elements {
		flag, ok := el.Clause.(*kingpin.FlagClause)
		if ok && el.Value != nil && strings.Contains(msg, strconv.Quote(*el.Value)) {
			return fmt.Errorf("--%s: %q is not %s", flag.Model().Name, *el.Value, want)
		}
	}
	return err
}
