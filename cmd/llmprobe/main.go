// Command llmprobe is a Prometheus exporter and synthetic prober for
// OpenAI-compatible inference servers.
package main

import (
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"

	"github.com/alecthomas/kingpin/v2"
	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/common/version"
	sloggokit "github.com/tjhop/slog-gokit"

	"github.com/llmprobe/llmprobe/internal/redact"
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
		fmt.Fprintf(os.Stderr, "llmprobe: %v (try --help)\n", err)
		return 2
	}
	base, err := logFlags.logger()
	if err != nil {
		fmt.Fprintf(os.Stderr, "llmprobe: %v\n", err)
		return 2
	}
	// The redactor sits under the caller valuer, so lines name their real caller.
	secrets := redact.New()
	logger := log.With(secrets.Logger(base), "ts", log.DefaultTimestampUTC, "caller", log.DefaultCaller)
	switch cmd {
	case serve.cmd.FullCommand():
		return serve.run(logger, slogFor(secrets.Logger(base), *logFlags.level), secrets)
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

func (f *logFlags) logger() (log.Logger, error) {
	w := log.NewSyncWriter(os.Stderr)
	var l log.Logger
	if *f.format == "json" {
		l = log.NewJSONLogger(w)
	} else {
		l = log.NewLogfmtLogger(w)
	}
	var opt level.Option
	switch *f.level {
	case "debug":
		opt = level.AllowDebug()
	case "info":
		opt = level.AllowInfo()
	case "warn":
		opt = level.AllowWarn()
	case "error":
		opt = level.AllowError()
	default:
		return nil, fmt.Errorf("unknown log level %q", *f.level)
	}
	return level.NewFilter(l, opt), nil
}

// slogFor bridges the project's go-kit logger to the *slog.Logger that
// exporter-toolkit wants, so its lines come out through the same logger
// (slog adds its own time and source).
func slogFor(l log.Logger, lvl string) *slog.Logger {
	var sl slog.Level
	_ = sl.UnmarshalText([]byte(strings.ToUpper(lvl)))
	return slog.New(sloggokit.NewGoKitHandler(l, sl))
}
