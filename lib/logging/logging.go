// Package logging writes llmprobe's log lines in one shape, level, ts,
// caller, msg, then the line's own keys, in logfmt or JSON: go-kit's lines
// and slog's (exporter-toolkit's, net/http's) alike.
package logging

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	sloggokit "github.com/tjhop/slog-gokit"
)

// New is the logger of --log.format (logfmt or json) and --log.level
// (debug, info, warn or error) writing to w, without ts and caller: Stamp
// adds them, and Slog writes through it in the same shape.
func New(w io.Writer, format, lvl string) (log.Logger, error) {
	var l log.Logger
	switch format {
	case "json":
		l = log.NewJSONLogger(log.NewSyncWriter(w))
	case "logfmt":
		l = log.NewLogfmtLogger(log.NewSyncWriter(w))
	default:
		return nil, fmt.Errorf("unknown log format %q", format)
	}
	var opt level.Option
	switch lvl {
	case "debug":
		opt = level.AllowDebug()
	case "info":
		opt = level.AllowInfo()
	case "warn":
		opt = level.AllowWarn()
	case "error":
		opt = level.AllowError()
	default:
		return nil, fmt.Errorf("unknown log level %q", lvl)
	}
	return level.NewFilter(l, opt), nil
}

// Stamp adds the time (UTC) and the caller to each line of l.
func Stamp(l log.Logger) log.Logger {
	return log.With(l, "ts", log.DefaultTimestampUTC, "caller", log.DefaultCaller)
}

// Slog is an slog.Logger whose lines l writes in the shape Stamp gives go-kit's
// lines: slog's time becomes ts, in UTC, and level, ts, caller and msg
// lead. l is the logger before Stamp. Records under lvl are dropped.
func Slog(l log.Logger, lvl string) *slog.Logger {
	var sl slog.Level
	_ = sl.UnmarshalText([]byte(strings.ToUpper(lvl))) // validated as --log.level
	return slog.New(sloggokit.NewGoKitHandler(reshape(l), sl))
}

// reshape puts slog-gokit's pairs (level, caller, time, msg, attributes)
// in go-kit's order with go-kit's key and form of the time.
func reshape(next log.Logger) log.Logger {
	return log.LoggerFunc(func(kv ...any) error {
		lead := make([]any, 0, 8)
		rest := make([]any, 0, len(kv))
		var lvl, ts, caller, msg []any
		for i := 0; i+1 < len(kv); i += 2 {
			switch k, v := kv[i], kv[i+1]; {
			case k == level.Key():
				lvl = []any{k, v}
			case k == slog.TimeKey && ts == nil:
				if t, ok := v.(time.Time); ok {
					v = t.UTC().Format(time.RFC3339Nano)
				}
				ts = []any{"ts", v}
			case k == "caller" && caller == nil:
				caller = []any{k, v}
			case k == slog.MessageKey && msg == nil:
				msg = []any{k, v}
			default:
				rest = append(rest, k, v)
			}
		}
		lead = append(append(append(append(lead, lvl...), ts...), caller...), msg...)
		return next.Log(append(lead, rest...)...)
	})
}
