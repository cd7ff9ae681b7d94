package prober

import (
	"encoding/json"
	"fmt"
	"time"
)

// Log is what happened to a request, line by line. Its lines are formatted
// only when read: a burst keeps every request's log, and most are never
// read, so formatting each line as it happened was a measurable part of a
// request's CPU.
type Log struct {
	lines []logLine
	// redact masks the target's secrets in a line's text: a line may quote
	// what the target sent.
	redact func(string) string
}

// logLine is a line of a request's log, not yet formatted; a line read
// back from JSON is its text, in format alone.
type logLine struct {
	at     time.Duration // since the request's t_sched
	format string
	args   []any
	text   bool
}

// Note adds a line to the request's log, at its time from t_sched,
// formatted as by fmt.Sprintf when the log is read: its args must not
// change afterwards (values, not buffers the stream reuses).
func (r *Result) Note(format string, args ...any) {
	r.Log.lines = append(r.Log.lines, logLine{at: time.Since(r.Sched), format: format, args: args})
}

// Lines are the log's lines, each at its time from t_sched, the target's
// secrets masked.
func (l Log) Lines() []string {
	out := make([]string, len(l.lines))
	for i, line := range l.lines {
		if line.text {
			out[i] = line.format
			continue
		}
		out[i] = fmt.Sprintf("%7.1fms ", float64(line.at.Microseconds())/1000) + fmt.Sprintf(line.format, line.args...)
		if l.redact != nil {
			out[i] = l.redact(out[i])
		}
	}
	return out
}

// MarshalJSON writes the log as its lines.
func (l Log) MarshalJSON() ([]byte, error) {
	if len(l.lines) == 0 {
		return []byte("null"), nil
	}
	return json.Marshal(l.Lines())
}

// UnmarshalJSON reads lines written by MarshalJSON.
func (l *Log) UnmarshalJSON(b []byte) error {
	var lines []string
	if err := json.Unmarshal(b, &lines); err != nil {
		return err
	}
	l.lines = make([]logLine, len(lines))
	for i, s := range lines {
		l.lines[i] = logLine{format: s, text: true}
	}
	return nil
}
