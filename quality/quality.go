// Package quality checks an answer against what a scenario or a golden line
// asks of it: its text (contains, regex, exact, JSON, a JSON Schema, the
// response format) and its tool calls (their functions' parameters and
// tool_choice).
package quality

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/lib/jsonschema"
)

// Check returns "" when answer passes every check q sets, else the first
// failed check's reason in one line, naming the failing path of a schema.
func Check(q *config.Quality, answer string) string {
	trimmed := strings.TrimSpace(answer)
	if q.Contains != "" && !strings.Contains(answer, q.Contains) {
		return "answer does not contain " + Quote(q.Contains)
	}
	if re := q.Regexp(); re != nil && !re.MatchString(answer) {
		return "answer does not match " + Quote(q.Regex)
	}
	if q.Exact != "" && trimmed != strings.TrimSpace(q.Exact) {
		return "answer is not exactly " + Quote(q.Exact)
	}
	if q.JSON && !json.Valid([]byte(trimmed)) {
		return "answer is not valid JSON"
	}
	if s := q.Schema(); s != nil {
		if why := Schema(s, trimmed); why != "" {
			return "answer " + why
		}
	}
	return ""
}

// Schema returns "" when text is JSON matching s, else why not: "is not
// JSON: …" or "does not match the schema at /path: …".
func Schema(s *jsonschema.Schema, text string) string {
	notJSON, why := schemaProblem(s, text)
	switch {
	case notJSON:
		return "is not JSON: " + why
	case why != "":
		return "does not match the schema " + why
	}
	return ""
}

// schemaProblem says why text is no JSON (notJSON) or does not match s
// ("at /path: …"); "" when it matches. A nil s asks for any JSON.
func schemaProblem(s *jsonschema.Schema, text string) (notJSON bool, why string) {
	if s == nil {
		if err := json.Unmarshal([]byte(text), new(any)); err != nil {
			return true, err.Error()
		}
		return false, ""
	}
	err := s.Validate(text)
	switch {
	case err == nil:
		return false, ""
	case errors.Is(err, jsonschema.ErrNotJSON):
		return true, strings.TrimPrefix(err.Error(), jsonschema.ErrNotJSON.Error()+": ")
	}
	return false, err.Error()
}

// Quote is s as a reason quotes it: JSON-escaped, at most 64 bytes.
func Quote(s string) string {
	if len(s) > 64 {
		n := 64
		for n > 0 && s[n]&0xC0 == 0x80 {
			n--
		}
		s = s[:n] + "…"
	}
	b, _ := json.Marshal(s)
	return string(b)
}
