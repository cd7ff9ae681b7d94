// Package replay reads request traces (the Azure LLM inference CSV and the
// Mooncake JSONL) one record at a time, never the whole file.
package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Trace formats.
const (
	Azure    = "azure"
	Mooncake = "mooncake"
)

// MaxLine is the longest line a trace may have; a Mooncake line of 1 MiB
// holds over 100,000 hash ids, far beyond any context window.
const MaxLine = 1 << 20

// MaxTokens bounds a record's lengths before any clamping, so a typo of a
// few digits is an error rather than a huge request.
const MaxTokens = 1 << 24

// Record is one request of a trace.
type Record struct {
	Line   int           // 1-based line in the file
	At     time.Duration // since the trace's first record
	Input  int           // prompt tokens
	Output int           // output tokens
	// Blocks are a Mooncake record's first block hash ids, at most
	// MaxBlocks of them; nil where the trace names none. Records whose
	// leading ids agree share that prefix.
	Blocks []int64
}

// BlockTokens is the tokens one Mooncake hash id stands for.
const BlockTokens = 512

// MaxBlocks bounds the hash ids a record keeps: prefixes are shared up to
// 64 blocks of 512 tokens (32k tokens); the rest of a longer prompt is the
// request's own. It keeps a planned request small however long its prompt.
const MaxBlocks = 64

// LineError is a record that cannot be read. Reading goes on after it.
type LineError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *LineError) Error() string {
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Field, e.Msg)
}

// Reader reads one trace file.
type Reader struct {
	f      *os.File
	sc     *bufio.Scanner
	name   string
	format string
	line   int
	cols   [3]int // azure: timestamp, context, generated
	first  int64  // the first record's time, ns (azure) or ms (mooncake)
	seen   bool
	last   time.Duration
}

// Open opens a trace; format "" detects it from the first line: a JSON
// object is Mooncake, a header with TIMESTAMP, ContextTokens and
// GeneratedTokens is Azure.
func Open(path, format string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	// A pipe or a device could block the load or never end.
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), MaxLine)
	r := &Reader{f: f, sc: sc, name: path}
	if err := r.start(format); err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

// Format is the trace's format.
func (r *Reader) Format() string { return r.format }

// Close closes the file.
func (r *Reader) Close() error { return r.f.Close() }

// start reads the header (Azure) or peeks the first line (Mooncake).
func (r *Reader) start(format string) error {
	peek, err := bufio.NewReader(io.NewSectionReader(r.f, 0, 4096)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	head := strings.TrimSpace(strings.TrimPrefix(peek, "\ufeff"))
	if format == "" {
		switch {
		case strings.HasPrefix(head, "{"):
			format = Mooncake
		case strings.Contains(head, "ContextTokens"):
			format = Azure
		case head == "":
			return fmt.Errorf("%s: is empty", r.name)
		default:
			return fmt.Errorf("%s:1: neither an Azure CSV header (TIMESTAMP,ContextTokens,GeneratedTokens) nor a Mooncake JSON line; name the format", r.name)
		}
	}
	r.format = format
	switch format {
	case Mooncake:
		return nil
	case Azure:
		if !r.sc.Scan() {
			if err := r.sc.Err(); err != nil {
				return err
			}
			return fmt.Errorf("%s: is empty", r.name)
		}
		r.line = 1
		names := strings.Split(strings.TrimPrefix(strings.TrimSpace(r.sc.Text()), "\ufeff"), ",")
		for i, want := range []string{"TIMESTAMP", "ContextTokens", "GeneratedTokens"} {
			r.cols[i] = -1
			for j, n := range names {
				if strings.EqualFold(strings.TrimSpace(n), want) {
					r.cols[i] = j
				}
			}
			if r.cols[i] < 0 {
				return &LineError{r.name, 1, "header", fmt.Sprintf("has no %s column (want TIMESTAMP,ContextTokens,GeneratedTokens)", want)}
			}
		}
		return nil
	default:
		return fmt.Errorf("format %q must be %s or %s", format, Azure, Mooncake)
	}
}

// Next returns the next record, io.EOF at the end, a *LineError for a line
// that cannot be read (the next call goes on after it), or another error
// when the file cannot be read. Blank lines are skipped.
func (r *Reader) Next() (Record, error) {
	for r.sc.Scan() {
		r.line++
		text := bytes.TrimSpace(r.sc.Bytes())
		if len(text) == 0 {
			continue
		}
		rec, err := r.parse(text)
		if err != nil {
			return Record{}, err
		}
		if rec.At < r.last {
			return Record{}, r.bad("timestamp", "%s is earlier than the record before it (%s); a trace must be in time order", rec.At, r.last)
		}
		r.last = rec.At
		return rec, nil
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return Record{}, fmt.Errorf("%s:%d: a line is longer than %d bytes", r.name, r.line+1, MaxLine)
		}
		return Record{}, err
	}
	return Record{}, io.EOF
}

func (r *Reader) bad(field, format string, args ...any) *LineError {
	return &LineError{r.name, r.line, field, fmt.Sprintf(format, args...)}
}

func (r *Reader) parse(text []byte) (Record, error) {
	rec := Record{Line: r.line}
	var at int64
	if r.format == Mooncake {
		var m struct {
			Timestamp    *float64 `json:"timestamp"`
			InputLength  *int     `json:"input_length"`
			OutputLength *int     `json:"output_length"`
			HashIDs      []int64  `json:"hash_ids"`
		}
		if err := json.Unmarshal(text, &m); err != nil {
			return rec, r.bad("json", "%v", err)
		}
		switch {
		case m.Timestamp == nil:
			return rec, r.bad("timestamp", "is missing")
		case !(*m.Timestamp >= 0 && *m.Timestamp < 1e15):
			return rec, r.bad("timestamp", "%g must be milliseconds at or above 0", *m.Timestamp)
		case m.InputLength == nil:
			return rec, r.bad("input_length", "is missing")
		case m.OutputLength == nil:
			return rec, r.bad("output_length", "is missing")
		}
		at = int64(*m.Timestamp * float64(time.Millisecond))
		rec.Input, rec.Output = *m.InputLength, *m.OutputLength
		if len(m.HashIDs) > 0 {
			rec.Blocks = slices.Clone(m.HashIDs[:min(len(m.HashIDs), MaxBlocks)]) // not the line's whole array
		}
	} else {
		fields := strings.Split(string(text), ",")
		if len(fields) <= max(r.cols[0], r.cols[1], r.cols[2]) {
			return rec, r.bad("columns", "%d columns; the header has more", len(fields))
		}
		t, err := parseTime(strings.TrimSpace(fields[r.cols[0]]))
		if err != nil {
			return rec, r.bad("TIMESTAMP", "%q is not a time like 2023-11-16 18:15:46.6805900", fields[r.cols[0]])
		}
		at = t.UnixNano()
		if rec.Input, err = strconv.Atoi(strings.TrimSpace(fields[r.cols[1]])); err != nil {
			return rec, r.bad("ContextTokens", "%q is not a whole number", fields[r.cols[1]])
		}
		if rec.Output, err = strconv.Atoi(strings.TrimSpace(fields[r.cols[2]])); err != nil {
			return rec, r.bad("GeneratedTokens", "%q is not a whole number", fields[r.cols[2]])
		}
	}
	in, out := "input_length", "output_length"
	if r.format == Azure {
		in, out = "ContextTokens", "GeneratedTokens"
	}
	if rec.Input < 0 || rec.Input > MaxTokens {
		return rec, r.bad(in, "%d must be within [0, %d]", rec.Input, MaxTokens)
	}
	if rec.Output < 0 || rec.Output > MaxTokens {
		return rec, r.bad(out, "%d must be within [0, %d]", rec.Output, MaxTokens)
	}
	if !r.seen {
		r.first, r.seen = at, true
	}
	rec.At = time.Duration(at - r.first)
	return rec, nil
}

// Azure writes 7 fractional digits; the 2024 trace adds a zone offset.
var timeLayouts = []string{"2006-01-02 15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", time.RFC3339Nano}

func parseTime(s string) (time.Time, error) {
	var err error
	for _, l := range timeLayouts {
		var t time.Time
		if t, err = time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, err
}
