package prompt

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/llmprobe/llmprobe/config"
)

// Bounds on what a dataset may make the daemon read and hold.
const (
	maxDatasetFileBytes   = 256 << 20
	maxDatasetLineBytes   = 8 << 20
	maxDatasetPrompts     = 10_000
	maxDatasetPromptBytes = 16 << 20 // of kept text, all prompts of a file together
	maxDatasetsBytes      = 64 << 20 // of kept text, all files together

	// Token estimate of a text: words × 1.3 (English BPE) or bytes ÷ 4,
	// whichever is more, so text without spaces is not counted as one token.
	tokensPerWord = 1.3
	bytesPerToken = 4
)

// readDatasets reads every scenario's dataset, by the scenario's index, or
// says why it cannot; all of them together keep at most maxDatasetsBytes
// of text, however many scenarios name them.
func readDatasets(c *config.Config) (map[int][]DatasetPrompt, config.FieldErrors) {
	total := 0
	return readEach(c, func(s *config.Scenario) (string, string) {
		if d := s.PromptDataset; d != nil && d.Format == config.DatasetShareGPT {
			return d.File, "prompt_dataset.file"
		}
		return "", ""
	}, func(file string) ([]DatasetPrompt, []string) {
		if total > maxDatasetsBytes {
			return nil, []string{fmt.Sprintf("%s is not read: the datasets before it are past %d MiB in all", file, maxDatasetsBytes>>20)}
		}
		prompts, err := readShareGPT(file)
		for _, p := range prompts {
			total += len(p.Text)
		}
		switch {
		case total > maxDatasetsBytes:
			return nil, []string{fmt.Sprintf("%s brings the prompts of all datasets to %d bytes, past %d MiB in all", file, total, maxDatasetsBytes>>20)}
		case err != nil:
			return nil, []string{err.Error()}
		}
		return prompts, nil
	})
}

// readShareGPT keeps the first human turn of each conversation, up to
// maxDatasetPrompts of them or maxDatasetPromptBytes of text; the rest of
// the file is not read.
func readShareGPT(file string) ([]DatasetPrompt, error) {
	f, err := openBounded(file, maxDatasetFileBytes, "a dataset", "; keep its first lines (head -n 10000)")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(newLimitedReader(f, maxDatasetFileBytes))
	sc.Buffer(make([]byte, 0, 64<<10), maxDatasetLineBytes)
	var (
		prompts []DatasetPrompt
		kept    int
		line    int
	)
	for sc.Scan() {
		line++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		if line == 1 && raw[0] == '[' {
			return nil, fmt.Errorf("%s:1: is a JSON array, not JSONL (one conversation per line); convert it with jq -c '.[]'", file)
		}
		var conv struct {
			Conversations *[]struct {
				From  string `json:"from"`
				Value string `json:"value"`
			} `json:"conversations"`
		}
		if err := json.Unmarshal(raw, &conv); err != nil {
			return nil, fmt.Errorf("%s:%d: not a JSON object with a conversations list: %s", file, line, jsonMessage(err))
		}
		if conv.Conversations == nil {
			return nil, fmt.Errorf("%s:%d: has no conversations list", file, line)
		}
		// A conversation without a human turn (some start with the model) is skipped.
		for _, turn := range *conv.Conversations {
			if (turn.From == "human" || turn.From == "user") && strings.TrimSpace(turn.Value) != "" {
				if kept+len(turn.Value) > maxDatasetPromptBytes {
					return finish(file, prompts)
				}
				kept += len(turn.Value)
				prompts = append(prompts, DatasetPrompt{Text: turn.Value, Line: line, Tokens: EstimateTokens(turn.Value)})
				break
			}
		}
		if len(prompts) == maxDatasetPrompts {
			return finish(file, prompts)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s:%d: a line is longer than %s", file, line+1, config.Bytes(maxDatasetLineBytes))
		}
		return nil, fmt.Errorf("%s:%d: %v", file, line+1, err)
	}
	return finish(file, prompts)
}

func finish(file string, prompts []DatasetPrompt) ([]DatasetPrompt, error) {
	if len(prompts) == 0 {
		return nil, fmt.Errorf("%s holds no conversation with a human turn (\"from\": \"human\")", file)
	}
	return prompts, nil
}

// EstimateTokens is the token count llmprobe requests for a text it cannot
// tokenize: words × 1.3, or bytes ÷ 4 where that is more (text without
// spaces); at least 1.
func EstimateTokens(text string) int {
	words := float64(len(strings.Fields(text)))
	return max(1, int(math.Ceil(max(words*tokensPerWord, float64(len(text))/bytesPerToken))))
}

// jsonMessage says what is wrong with a line without Go's type names.
func jsonMessage(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			return fmt.Sprintf("found a JSON %s", te.Value)
		}
		return fmt.Sprintf("%s is a JSON %s", field, te.Value)
	}
	msg := err.Error()
	if !utf8.ValidString(msg) {
		msg = strings.ToValidUTF8(msg, "?")
	}
	return msg
}

// limitedReader fails past limit bytes: a file that grows while it is
// read stays bounded.
type limitedReader struct {
	f        *os.File
	n, limit int64 // n: bytes left to read, limit+1 at first
}

func newLimitedReader(f *os.File, limit int64) *limitedReader {
	return &limitedReader{f: f, n: limit + 1, limit: limit}
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, fmt.Errorf("the file grew past %s while it was read", config.Bytes(l.limit))
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.f.Read(p)
	l.n -= int64(n)
	return n, err
}
