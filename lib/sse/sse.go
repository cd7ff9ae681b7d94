// Package sse reads text/event-stream responses by the WHATWG rules, with a
// bounded line and event size.
package sse

import (
	"bytes"
	"errors"
	"io"
)

// ErrLineTooLong means a line, or an event's data, passed the reader's limit:
// the stream is treated as broken rather than buffered without bound.
var ErrLineTooLong = errors.New("SSE line too long")

// Event is one dispatched server-sent event. Data aliases the reader's buffer
// and is valid only until the next call to Next. "[DONE]" is not special
// here: it is ordinary data that the caller recognises.
type Event struct {
	Name string // the last `event:` field; "" means "message"
	Data []byte // `data:` lines joined with "\n"
	ID   string
}

// Reader parses a text/event-stream by the WHATWG rules: CRLF, LF and lone
// CR line endings, comments, multi-line data, one optional space after the
// colon, and a bounded line length.
type Reader struct {
	r       io.Reader
	buf     []byte
	start   int
	end     int
	max     int
	skipLF  bool // the last line ended in CR at the buffer's end: a following LF belongs to it
	started bool // past a possible byte-order mark
	err     error

	data    []byte
	name    string
	id      string
	partial bool
}

const defaultMaxLine = 1 << 20

// initialBuffer fits a typical chunk (200-400 bytes); the buffer doubles for
// longer lines. A reader is held per open stream, so this is per-stream memory.
const initialBuffer = 512

var bom = []byte("\xEF\xBB\xBF")

// NewReader reads events from r. A line longer than maxLineBytes (1 MiB if
// <= 0) or an event whose data passes 4×maxLineBytes ends the stream with
// ErrLineTooLong.
func NewReader(r io.Reader, maxLineBytes int) *Reader {
	if maxLineBytes <= 0 {
		maxLineBytes = defaultMaxLine
	}
	return &Reader{r: r, buf: make([]byte, initialBuffer), max: maxLineBytes}
}

// Partial reports whether the stream ended inside an event: data was pending
// with no blank line to dispatch it. Callers use it to tell a cut stream from
// a clean end.
func (s *Reader) Partial() bool { return s.partial }

// Next returns the next event. At the end of the stream it returns io.EOF
// (an unterminated event is discarded, and Partial reports it); read errors
// are returned as they came.
func (s *Reader) Next() (Event, error) {
	s.data = s.data[:0]
	s.name = ""
	for {
		line, err := s.readLine()
		if err != nil {
			if len(line) > 0 || len(s.data) > 0 {
				s.partial = true
			}
			return Event{}, err
		}
		if len(line) == 0 {
			if len(s.data) == 0 {
				s.name = ""
				continue
			}
			return Event{Name: s.name, Data: s.data[:len(s.data)-1], ID: s.id}, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if len(s.data) == 0 && s.blankNext() {
				return Event{Name: s.name, Data: value, ID: s.id}, nil
			}
			if len(s.data)+len(value)+1 > 4*s.max {
				return Event{}, ErrLineTooLong
			}
			s.data = append(s.data, value...)
			s.data = append(s.data, '\n')
		case "event":
			s.name = string(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				s.id = string(value)
			}
		}
	}
}

// readLine returns the next line without its ending. The slice is valid until
// the next call. At the end of the stream it returns the unterminated rest and
// the error.
func (s *Reader) readLine() ([]byte, error) {
	for {
		seg := s.buf[s.start:s.end]
		if s.skipLF && len(seg) > 0 {
			s.skipLF = false
			if seg[0] == '\n' {
				s.start++
				continue
			}
		}
		if !s.started {
			if len(seg) < 3 && s.err == nil {
				s.fill()
				continue
			}
			s.started = true
			if bytes.HasPrefix(seg, bom) {
				s.start += 3
				continue
			}
		}
		if i := lineEnd(seg); i >= 0 {
			line := seg[:i]
			if len(line) > s.max {
				return nil, ErrLineTooLong
			}
			switch {
			case seg[i] == '\n':
				s.start += i + 1
			case i+1 < len(seg):
				s.start += i + 1
				if seg[i+1] == '\n' {
					s.start++
				}
			default:
				// CR at the end of what we have: a following LF is part of this ending.
				s.start += i + 1
				s.skipLF = true
			}
			return line, nil
		}
		if len(seg) > s.max {
			return nil, ErrLineTooLong
		}
		if s.err != nil {
			s.start = s.end
			return seg, s.err
		}
		s.fill()
	}
}

// blankNext takes a blank line if the buffer holds one next. An event of
// one data line, a streamed token's, is then handed out where it lies
// rather than copied.
func (s *Reader) blankNext() bool {
	seg := s.buf[s.start:s.end]
	switch {
	case s.skipLF || len(seg) == 0:
		return false
	case seg[0] == '\n':
		s.start++
	case seg[0] != '\r' || len(seg) == 1:
		return false // a CR last in the buffer may be half of a CRLF
	case seg[1] == '\n':
		s.start += 2
	default:
		s.start++
	}
	return true
}

// lineEnd finds the first CR or LF.
func lineEnd(b []byte) int {
	lf := bytes.IndexByte(b, '\n')
	search := b
	if lf >= 0 {
		search = b[:lf]
	}
	if cr := bytes.IndexByte(search, '\r'); cr >= 0 {
		return cr
	}
	return lf
}

// fill reads more input, compacting or growing the buffer (never past the line limit).
func (s *Reader) fill() {
	if s.start > 0 {
		n := copy(s.buf, s.buf[s.start:s.end])
		s.start, s.end = 0, n
	}
	if s.end == len(s.buf) {
		size := min(2*len(s.buf), s.max+2)
		if size <= len(s.buf) {
			size = len(s.buf) + 1
		}
		nb := make([]byte, size)
		copy(nb, s.buf[:s.end])
		s.buf = nb
	}
	n, err := s.r.Read(s.buf[s.end:])
	s.end += n
	if err != nil {
		s.err = err
	}
}
