package testkit

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/go-logfmt/logfmt"
)

// LogLine is one log line's keys in order and their values (a JSON value
// that is not a string reads as "").
type LogLine struct {
	Keys   []string
	Values map[string]string
}

// LogLead are the keys every llmprobe log line has, first in logfmt.
var LogLead = []string{"level", "ts", "caller", "msg"}

// ParseLogLine reads a line of --log.format (logfmt or json) with the
// format's own parser; anything else fails the test.
func ParseLogLine(t testing.TB, format, line string) LogLine {
	t.Helper()
	l := LogLine{Values: map[string]string{}}
	if format == "json" {
		dec := json.NewDecoder(strings.NewReader(line))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			t.Fatalf("not a JSON object: %q", line)
		}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			s, _ := v.(string)
			l.Keys, l.Values[k.(string)] = append(l.Keys, k.(string)), s
		}
		return l
	}
	dec := logfmt.NewDecoder(strings.NewReader(line))
	records := 0
	for dec.ScanRecord() {
		records++
		for dec.ScanKeyval() {
			l.Keys, l.Values[string(dec.Key())] = append(l.Keys, string(dec.Key())), string(dec.Value())
		}
	}
	if err := dec.Err(); err != nil || records != 1 {
		t.Fatalf("not one logfmt record: %q: %v", line, err)
	}
	return l
}

// HasShape says l has llmprobe's one shape in format: LogLead first in
// logfmt (go-kit's JSON sorts its keys, so there they are only all
// present), and no slog time key beside ts.
func (l LogLine) HasShape(format string) bool {
	if slices.Contains(l.Keys, "time") || len(l.Keys) < len(LogLead) {
		return false
	}
	if format == "logfmt" {
		return slices.Equal(l.Keys[:len(LogLead)], LogLead)
	}
	for _, k := range LogLead {
		if !slices.Contains(l.Keys, k) {
			return false
		}
	}
	return true
}
