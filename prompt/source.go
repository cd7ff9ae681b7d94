package prompt

import (
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
	errs = append(errs, gerrs...)
	out := map[string]Source{}
	for i, s := range c.Scenarios {
		if src := (Source{Dataset: datasets[i], Golden: goldens[i]}); src.Dataset != nil || src.Golden != nil {
			out[s.Name] = src
		}
	}
	return out, errs
}
