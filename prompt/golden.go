package prompt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"unicode"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/quality"
)

// Bounds on what golden sets may make the daemon read and hold. A golden
// set is read whole (a line dropped would silently change the pass rate),
// so a file past a bound is refused, not cut.
const (
	maxGoldenFileBytes = 16 << 20
	maxGoldenLineBytes = 1 << 20
	maxGoldenLines     = 10_000
	maxGoldenBytes     = 64 << 20 // all files together
	maxGoldenID        = 64
)

// readGoldens reads every scenario's golden set, by the scenario's index,
// or says what is wrong with it, every line at fault with its file, line
// and field; all of them together at most maxGoldenBytes.
func readGoldens(c *config.Config) (map[int][]GoldenLine, config.FieldErrors) {
	total := 0
	return readEach(c, func(s *config.Scenario) (string, string) {
		if s.Golden == nil {
			return "", ""
		}
		return s.Golden.File, "golden.file"
	}, func(file string) ([]GoldenLine, []string) {
		if total > maxGoldenBytes {
			return nil, []string{fmt.Sprintf("%s is not read: the golden sets before it are past %d MiB in all", file, maxGoldenBytes>>20)}
		}
		lines, size, errs := readGolden(file)
		if total += size; total > maxGoldenBytes {
			return nil, []string{fmt.Sprintf("%s brings the golden sets to %d bytes, past %d MiB in all", file, total, maxGoldenBytes>>20)}
		}
		return lines, errs
	})
}

// goldenJSON is one line of a golden set as written.
type goldenJSON struct {
	ID       *string `json:"id"`
	Prompt   *string `json:"prompt"`
	Messages []struct {
		Role    string  `json:"role"`
		Content *string `json:"content"`
	} `json:"messages"`
	Checks *struct {
		Contains   string `json:"contains"`
		Regex      string `json:"regex"`
		JSON       bool   `json:"json"`
		Exact      string `json:"exact"`
		JSONSchema any    `json:"json_schema"`
	} `json:"checks"`
	Answer *string `json:"answer"`
}

// goldenSet is a golden set's kind of file.
var goldenSet = jsonlFile{what: "a golden set", item: "golden line", fileBytes: maxGoldenFileBytes, lineBytes: maxGoldenLineBytes, items: maxGoldenLines}

// readGolden reads a golden set whole, and the bytes of its lines, or
// every problem of the file (jsonlFile.read).
func readGolden(file string) (_ []GoldenLine, size int, _ []string) {
	var lines []GoldenLine
	ids := map[string]int{}
	errs := goldenSet.read(file, func(raw []byte, n int) []string {
		line, problems := parseGoldenLine(raw, n, ids)
		if len(problems) == 0 {
			lines, size = append(lines, line), size+len(raw)
		}
		return problems
	})
	if len(errs) > 0 {
		return nil, 0, errs
	}
	return lines, size, nil
}

// parseGoldenLine reads line n of a golden set; ids maps each id seen to
// its line and learns this one's. It returns every problem of the line.
func parseGoldenLine(raw []byte, n int, ids map[string]int) (GoldenLine, []string) {
	var g goldenJSON
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&g); err != nil {
		return GoldenLine{}, []string{"not a golden line (a JSON object with prompt or messages, and checks): " + strings.TrimPrefix(jsonMessage(err), "json: ")}
	}
	if dec.More() {
		return GoldenLine{}, []string{"holds more than one JSON value"}
	}
	line := GoldenLine{Line: n}
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if g.ID != nil {
		line.ID = *g.ID
		switch first, dup := ids[line.ID]; {
		case !printable(line.ID) || len(line.ID) > maxGoldenID:
			add("id: %s must be 1 to %d printable characters", quality.Quote(line.ID), maxGoldenID)
		case dup:
			add("id: %s repeats the id of line %d", quality.Quote(line.ID), first)
		default:
			ids[line.ID] = n
		}
	}
	problems = append(problems, readGoldenPrompt(&line, g)...)
	if g.Checks == nil {
		add("checks: is required: contains, regex, exact, json or json_schema")
		return line, problems
	}
	c := g.Checks
	line.Checks = config.Quality{Contains: c.Contains, Regex: c.Regex, JSON: c.JSON, Exact: c.Exact, JSONSchema: c.JSONSchema}
	var fe config.FieldErrors
	line.Checks.Validate("checks", &fe)
	for _, e := range fe {
		add("%s: %s", e.Path, e.Msg)
	}
	if g.Answer != nil {
		line.Answer = *g.Answer
		if why := quality.Check(&line.Checks, line.Answer); why != "" && len(fe) == 0 {
			add("answer: the reference answer fails the line's own checks: %s", why)
		}
	}
	return line, problems
}

// goldenRoles are the message roles a golden line may use.
var goldenRoles = []string{"system", "developer", "user", "assistant"}

// readGoldenPrompt fills in l's prompt or messages, and its token estimate.
func readGoldenPrompt(l *GoldenLine, g goldenJSON) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	switch {
	case g.Prompt != nil && g.Messages != nil:
		add("prompt: set prompt or messages, not both")
	case g.Prompt != nil:
		if strings.TrimSpace(*g.Prompt) == "" {
			add("prompt: is empty")
		}
		l.Prompt = *g.Prompt
		l.Tokens = EstimateTokens(l.Prompt)
	case len(g.Messages) == 0:
		add("prompt: is required (or messages, a list of {role, content})")
	default:
		var all strings.Builder
		for i, m := range g.Messages {
			switch {
			case !slices.Contains(goldenRoles, m.Role):
				add("messages[%d].role: %s must be one of %s", i, quality.Quote(m.Role), strings.Join(goldenRoles, ", "))
			case i == len(g.Messages)-1 && m.Role != "user":
				add("messages[%d].role: the last message must be the user's, not %s", i, quality.Quote(m.Role))
			}
			if m.Content == nil || strings.TrimSpace(*m.Content) == "" {
				add("messages[%d].content: is required and not empty", i)
				continue
			}
			l.Messages = append(l.Messages, GoldenMessage{Role: m.Role, Content: *m.Content})
			all.WriteString(*m.Content)
			all.WriteByte('\n')
		}
		l.Tokens = EstimateTokens(all.String())
	}
	return problems
}

func printable(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0
}

// openBounded opens file for reading, refusing what is no regular file
// (a FIFO or a device would block the load or never end) and what is past
// limit bytes; what names the file's kind in the error, and hint ends it.
func openBounded(file string, limit int64, what, hint string) (*os.File, error) {
	fi, err := os.Stat(file)
	switch {
	case err != nil:
		return nil, fmt.Errorf("cannot be read: %v", config.FileError(err))
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file", file)
	case fi.Size() > limit:
		return nil, fmt.Errorf("%s is %d bytes, past the %d MiB %s may be%s", file, fi.Size(), limit>>20, what, hint)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("cannot be read: %v", config.FileError(err))
	}
	return f, nil
}

// goldenPrompt is line l sent with nonce: the nonce line leads the first
// message (so no cached prefix hides the prompt's cost), a messages line's
// earlier messages go as the history before its last, the user's.
func goldenPrompt(l *GoldenLine, nonce string) Prompt {
	head := "ref:" + nonce + "\n"
	p := Prompt{RequestedTokens: EstimateTokens(head) + l.Tokens, Estimated: true, Golden: l}
	if len(l.Messages) == 0 {
		p.Text = head + l.Prompt
		return p
	}
	last := len(l.Messages) - 1
	p.Text = l.Messages[last].Content
	if last == 0 {
		p.Text = head + p.Text
		return p
	}
	p.History = make([]Message, last)
	for i, m := range l.Messages[:last] {
		p.History[i] = Message(m)
	}
	p.History[0].Content = head + p.History[0].Content
	return p
}
