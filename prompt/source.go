package prompt

import (
	"fmt"
	"strconv"

	"github.com/llmprobe/llmprobe/config"
)

// Source is what a scenario's prompts are drawn from besides its own
// fields: a dataset's prompts or a golden set's lines, read when the
// configuration is compiled (ReadSources). The zero Source draws the
// scenario's own prompts: synthetic ones, or its literal prompt.
type Source struct {
	Dataset []DatasetPrompt
	Golden  []GoldenLine
	Audio   []Clip
}

// DatasetPrompt is one prompt from a dataset.
type DatasetPrompt struct {
	Text string
	Line int // in the file
	// Tokens is an estimate (EstimateTokens); the server's usage counts them.
	Tokens int
}

// GoldenLine is one prompt of a golden set and what its answer must pass.
type GoldenLine struct {
	ID   string // optional; named with Line in a failed check's reason
	Line int    // in the file
	// Prompt is the user message; Messages, when set instead, is the whole
	// message list, whose last message is the user's.
	Prompt   string
	Messages []GoldenMessage
	Checks   config.Quality
	// Answer is the reference answer, which passes Checks (checked at load).
	Answer string
	// Tokens estimates the prompt's length (EstimateTokens).
	Tokens int
}

// GoldenMessage is one message of a golden prompt.
type GoldenMessage struct {
	Role    string
	Content string
}

// Name is how a failed check names the line: "golden line 12 (capital-fr)".
func (l *GoldenLine) Name() string {
	if l.ID == "" {
		return "golden line " + strconv.Itoa(l.Line)
	}
	return "golden line " + strconv.Itoa(l.Line) + " (" + l.ID + ")"
}

// ReadSources reads what each scenario of c draws its prompts from, by the
// scenario's name: its dataset's prompts and its golden set's lines, each
// file read once whatever the scenarios that name it, every problem with
// the field at fault.
func ReadSources(c *config.Config) (map[string]Source, config.FieldErrors) {
	datasets, errs := readDatasets(c)
	goldens, gerrs := readGoldens(c)
	clips, aerrs := readAudio(c)
	errs = append(append(errs, gerrs...), aerrs...)
	out := map[string]Source{}
	for i, s := range c.Scenarios {
		if src := (Source{Dataset: datasets[i], Golden: goldens[i], Audio: clips[i]}); src.Dataset != nil || src.Golden != nil || src.Audio != nil {
			out[s.Name] = src
		}
	}
	return out, errs
}

// readEach reads the file each scenario of c names, by the scenario's
// index: once per file, whatever the scenarios that name it, which share
// its items. fileOf is a scenario's file and the field that names it (""
// for none); read returns a file's items, or its problems, each added at
// the field of every scenario that names the file.
func readEach[T any](c *config.Config, fileOf func(s *config.Scenario) (file, field string), read func(file string) ([]T, []string)) (map[int][]T, config.FieldErrors) {
	type loaded struct {
		items []T
		errs  []string
	}
	var errs config.FieldErrors
	out := map[int][]T{}
	files := map[string]loaded{}
	for i := range c.Scenarios {
		file, field := fileOf(&c.Scenarios[i])
		if file == "" {
			continue
		}
		l, seen := files[file]
		if !seen {
			l.items, l.errs = read(file)
			files[file] = l
		}
		for _, e := range l.errs {
			errs.Add(fmt.Sprintf("scenarios[%d].%s", i, field), "%s", e)
		}
		if len(l.errs) == 0 {
			out[i] = l.items
		}
	}
	return out, errs
}
