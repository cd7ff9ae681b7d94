package prober

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// The chunks real engines stream are a few plain shapes: lower-case keys,
// strings, scalars where llmprobe reads nothing. A chunkScan reads those
// in one pass without building a tree, which halves the decoding per
// event; anything else (a key in upper case or with an escape, a
// surrogate's escape, a duplicate, a nested value outside the fields read,
// a wrong type) makes it give up, and the full parser reads the chunk from
// the start. So it only ever accepts strict JSON whose reading it is sure
// of, and never decides a chunk is malformed.
type chunkScan struct {
	b []byte
	i int
}

// scanChunk reads data into c, whose choices must be empty, and reports
// whether it could; when not, c is half filled.
func scanChunk(data []byte, c *streamChunk) bool {
	s := chunkScan{b: data}
	if !s.chunk(c) {
		return false
	}
	s.space()
	return s.i == len(s.b)
}

func (s *chunkScan) chunk(c *streamChunk) bool {
	var seen keySet
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "choices":
			return seen.first(0) && s.choices(c)
		case "model":
			return seen.first(1) && s.text(&c.Model)
		case "usage":
			if !seen.first(2) {
				return false
			}
			if s.null() {
				c.Usage = nil
				return true
			}
			c.Usage = &usage{}
			return s.usage(c.Usage)
		case "error", "metrics", "timings":
			return false // kept raw: the full parser's
		}
		return s.scalar()
	})
}

func (s *chunkScan) choices(c *streamChunk) bool {
	if s.null() {
		c.Choices = nil
		return true
	}
	return s.array(func() bool {
		c.Choices = append(c.Choices, choice{})
		ch := &c.Choices[len(c.Choices)-1]
		if s.null() {
			return true
		}
		var seen keySet
		return s.object(func(key []byte) bool {
			switch string(key) {
			case "text":
				return seen.first(0) && s.output(&ch.Text)
			case "finish_reason":
				return seen.first(1) && s.text(&ch.FinishReason)
			case "delta":
				return seen.first(2) && (s.null() || s.delta(&ch.Delta))
			}
			return s.scalar()
		})
	})
}

func (s *chunkScan) delta(d *choiceDelta) bool {
	var seen keySet
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "content":
			return seen.first(0) && s.output(&d.Content)
		case "reasoning_content":
			return seen.first(1) && s.output(&d.ReasoningContent)
		case "reasoning":
			return seen.first(2) && s.output(&d.Reasoning)
		case "refusal":
			return seen.first(3) && s.output(&d.Refusal)
		case "tool_calls":
			return seen.first(4) && s.null() // items are kept raw: the full parser's
		}
		return s.scalar()
	})
}

func (s *chunkScan) usage(u *usage) bool {
	var seen keySet
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "prompt_tokens":
			return seen.first(0) && s.integer(&u.PromptTokens)
		case "completion_tokens":
			return seen.first(1) && s.integer(&u.CompletionTokens)
		case "reasoning_tokens":
			return seen.first(2) && s.integer(&u.ReasoningTokens)
		case "completion_tokens_details", "prompt_tokens_details":
			return false
		}
		return s.scalar()
	})
}

// keySet notes which of an object's read keys came: a second of one is
// the full parser's to resolve.
type keySet uint8

func (k *keySet) first(n uint) bool {
	if *k&(1<<n) != 0 {
		return false
	}
	*k |= 1 << n
	return true
}

func (s *chunkScan) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// eat takes c, after any space, if it comes next.
func (s *chunkScan) eat(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// object reads an object, handing each key to member with the scan at its
// value; keys must be plain lower-case ASCII.
func (s *chunkScan) object(member func(key []byte) bool) bool {
	if !s.eat('{') {
		return false
	}
	if s.eat('}') {
		return true
	}
	for {
		s.space()
		key, ok := s.plain()
		if !ok || !lowerASCII(key) || !s.eat(':') {
			return false
		}
		s.space()
		if !member(key) {
			return false
		}
		if !s.eat(',') {
			return s.eat('}')
		}
	}
}

func (s *chunkScan) array(item func() bool) bool {
	if !s.eat('[') {
		return false
	}
	if s.eat(']') {
		return true
	}
	for {
		s.space()
		if !item() {
			return false
		}
		if !s.eat(',') {
			return s.eat(']')
		}
	}
}

// plain reads a string without escapes or control characters, in valid
// UTF-8, and returns its bytes: a key.
func (s *chunkScan) plain() ([]byte, bool) {
	v, escaped, ok := s.str()
	return v, ok && !escaped
}

// str reads a string without control characters, in valid UTF-8, whose
// escapes are JSON's but for surrogates (\ud800-\udfff: pairs and strays are
// the full parser's), and returns its bytes as written.
func (s *chunkScan) str() (v []byte, escaped, ok bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false, false
	}
	start := s.i + 1
	ascii := true
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			v = s.b[start:j]
			return v, escaped, ascii || utf8.Valid(v)
		case c == '\\':
			n := escapeLen(s.b[j+1:])
			if n == 0 {
				return nil, false, false
			}
			escaped = true
			j += n
		case c < 0x20:
			return nil, false, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false, false
}

// escapeLen is the length of the escape b starts with, after its
// backslash; 0 for one JSON has not, or a surrogate's.
func escapeLen(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	switch b[0] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 1
	case 'u':
		r, ok := hex4(b[1:])
		if !ok || utf16.IsSurrogate(r) {
			return 0
		}
		return 5
	}
	return 0
}

// hex4 reads the four hex digits of a \u escape.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	r, err := strconv.ParseUint(string(b[:4]), 16, 16)
	return rune(r), err == nil
}

// unescape is v, a string str read, with its escapes replaced.
func unescape(v []byte) string {
	out := make([]byte, 0, len(v))
	for i := 0; i < len(v); i++ {
		if v[i] != '\\' {
			out = append(out, v[i])
			continue
		}
		i++
		switch c := v[i]; c {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, _ := hex4(v[i+1:])
			out = utf8.AppendRune(out, r)
			i += 4
		default: // " \ /
			out = append(out, c)
		}
	}
	return unsafe.String(unsafe.SliceData(out), len(out)) // out is not written again
}

// null takes a null if one comes next.
func (s *chunkScan) null() bool { return s.literal("null") }

func (s *chunkScan) literal(word string) bool {
	if len(s.b)-s.i >= len(word) && string(s.b[s.i:s.i+len(word)]) == word {
		s.i += len(word)
		return true
	}
	return false
}

// text reads a string or null into *to, a copy to keep.
func (s *chunkScan) text(to *string) bool { return s.readText(to, true) }

// output reads an output delta, a string or null, into *to, which shares the
// chunk's memory when it has no escape: a copy per token is most of what
// reading a chunk allocates, and a delta is read only while its event is.
func (s *chunkScan) output(to *string) bool { return s.readText(to, false) }

func (s *chunkScan) readText(to *string, keep bool) bool {
	if s.null() {
		*to = ""
		return true
	}
	v, escaped, ok := s.str()
	switch {
	case !ok:
	case escaped:
		*to = unescape(v)
	case keep || len(v) == 0:
		*to = string(v)
	default:
		*to = unsafe.String(&v[0], len(v))
	}
	return ok
}

// integer reads null or an integer of at most 18 digits, no fraction or
// exponent, into *to.
func (s *chunkScan) integer(to *int) bool {
	if s.null() {
		*to = 0
		return true
	}
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	first := s.i
	if !s.digits() {
		return false
	}
	if n := s.i - first; n > 18 || n > 1 && s.b[first] == '0' {
		return false
	}
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case '.', 'e', 'E':
			return false
		}
	}
	v, err := strconv.Atoi(string(s.b[start:s.i]))
	*to = v
	return err == nil
}

// scalar skips a string, number, true, false or null.
func (s *chunkScan) scalar() bool {
	if s.i >= len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case '"':
		_, _, ok := s.str()
		return ok
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.null()
	}
	return s.number()
}

// number skips a number by JSON's grammar.
func (s *chunkScan) number() bool {
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case !s.digits():
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if !s.digits() {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

// digits skips one or more digits.
func (s *chunkScan) digits() bool {
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}
