package logging

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log/level"

	"github.com/llmprobe/llmprobe/internal/testkit"
)

// go-kit's lines, slog's and the standard log's through slog come out in
// one shape: level, ts (UTC, RFC 3339), caller, msg first, no slog time.
func TestOneShape(t *testing.T) {
	for _, format := range []string{"logfmt", "json"} {
		var out bytes.Buffer
		base, err := New(&out, format, "info")
		if err != nil {
			t.Fatal(err)
		}
		level.Info(Stamp(base)).Log("msg", "configuration loaded", "targets", 1)
		sl := Slog(base, "info")
		sl.Info("Listening on", "address", "127.0.0.1:9479")
		sl.Debug("under the level")
		slog.NewLogLogger(sl.Handler(), slog.LevelError).Print("http: TLS handshake error from 127.0.0.1:1234: EOF")
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 3 {
			t.Fatalf("%s: %d lines, want 3 (the debug line dropped):\n%s", format, len(lines), out.String())
		}
		for i, line := range lines {
			f := testkit.ParseLogLine(t, format, line)
			if !f.HasShape(format) {
				t.Errorf("%s line %d keys %v, want level ts caller msg (first in logfmt) and no time: %s", format, i, f.Keys, line)
			}
			if ts, err := time.Parse(time.RFC3339Nano, f.Values["ts"]); err != nil || !strings.HasSuffix(f.Values["ts"], "Z") || time.Since(ts) > time.Minute {
				t.Errorf("%s line %d ts %q: want a recent UTC RFC 3339 time (%v)", format, i, f.Values["ts"], err)
			}
			if !strings.HasSuffix(f.Values["caller"], ".go:"+strings.Split(f.Values["caller"], ":")[1]) || !strings.HasPrefix(f.Values["caller"], "logging_test.go:") {
				t.Errorf("%s line %d caller %q: want this file's line", format, i, f.Values["caller"])
			}
		}
		if f := testkit.ParseLogLine(t, format, lines[2]); f.Values["level"] != "error" || !strings.Contains(f.Values["msg"], "TLS handshake") {
			t.Errorf("%s: the standard log's line: %s", format, lines[2])
		}
	}
	if _, err := New(&bytes.Buffer{}, "text", "info"); err == nil {
		t.Error("format text accepted")
	}
}
