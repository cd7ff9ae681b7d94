// Package golden answers the prompts of a golden set with their reference
// answers, and a seeded share of them wrong, so tests can measure answer
// quality without a model.
package golden

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"strings"
	"unicode"
)

// Wrong is the answer to a prompt drawn to be answered wrong: no golden
// check that asks for anything passes it.
const Wrong = "I am not sure."

// maxFileBytes bounds the file the sim reads: as llmprobe's own bound.
const maxFileBytes = 16 << 20

// Set is a golden set's reference answers by prompt.
type Set struct {
	answers   map[string]string
	wrongRate float64
	seed      uint64
}

// line is the part of a golden line the sim reads; the checks are
// llmprobe's to judge.
type line struct {
	Prompt   *string `json:"prompt"`
	Messages []struct {
		Content string `json:"content"`
	} `json:"messages"`
	Answer string `json:"answer"`
}

// Load reads the golden set in file (llmprobe's JSONL: prompt or messages,
// checks, answer). Lines without an answer are left out; a wrongRate share
// of prompts, drawn from seed and each request's whole text, get Wrong.
func Load(file string, wrongRate float64, seed int64) (*Set, error) {
	if !(wrongRate >= 0 && wrongRate <= 1) {
		return nil, fmt.Errorf("golden wrong rate %g must be within [0, 1]", wrongRate)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := &Set{answers: map[string]string{}, wrongRate: wrongRate, seed: uint64(seed)}
	sc := bufio.NewScanner(io.LimitReader(f, maxFileBytes))
	sc.Buffer(make([]byte, 0, 64<<10), maxFileBytes)
	for n := 1; sc.Scan(); n++ {
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var l line
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", file, n, err)
		}
		if strings.TrimSpace(l.Answer) == "" {
			continue
		}
		s.answers[l.key()] = l.Answer
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(s.answers) == 0 {
		return nil, errors.New(file + " holds no golden line with an answer")
	}
	return s, nil
}

// key is the text the line's prompt arrives as, less the nonce line: a
// prompt as it is, messages' contents a blank line apart, as llmprobe
// joins them for the completions API.
func (l line) key() string {
	if l.Prompt != nil {
		return *l.Prompt
	}
	texts := make([]string, len(l.Messages))
	for i, m := range l.Messages {
		texts[i] = m.Content
	}
	return strings.Join(texts, "\n\n")
}

// Answer is the answer to a prompt made of texts (a completions prompt,
// or each chat message's text) as tokens, or nil for a prompt the set does
// not know. The nonce line llmprobe puts before the first text
// ("ref:<words>\n") is not part of the prompt.
func (s *Set) Answer(texts []string) []string {
	if len(texts) == 0 {
		return nil
	}
	whole := strings.Join(texts, "\n\n")
	key := whole
	if rest, ok := strings.CutPrefix(key, "ref:"); ok {
		if _, after, found := strings.Cut(rest, "\n"); found {
			key = after
		}
	}
	answer, ok := s.answers[key]
	if !ok {
		return nil
	}
	if s.wrongRate > 0 && draw(s.seed, whole) < s.wrongRate {
		answer = Wrong
	}
	return Tokens(answer)
}

// draw is a uniform number in [0, 1) from seed and text: the same request
// (its nonce included) is answered wrong or right whenever it comes.
func draw(seed uint64, text string) float64 {
	h := fnv.New64a()
	var b [8]byte
	for i := range b {
		b[i] = byte(seed >> (8 * i))
	}
	_, _ = h.Write(b[:])
	_, _ = h.Write([]byte(text))
	return float64(h.Sum64()>>11) / (1 << 53)
}

// Tokens splits an answer into tokens, each a word with the space before
// it, the answer's trailing space on the last: joined, they are the answer.
func Tokens(answer string) []string {
	var out []string
	start, inWord := 0, false
	for i, r := range answer {
		space := unicode.IsSpace(r)
		if inWord && space {
			out = append(out, answer[start:i])
			start = i
		}
		inWord = !space
	}
	if start < len(answer) {
		if len(out) > 0 && strings.TrimSpace(answer[start:]) == "" {
			out[len(out)-1] += answer[start:]
		} else {
			out = append(out, answer[start:])
		}
	}
	return out
}
