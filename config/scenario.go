// A scenario: what each request sends (prompt, token lengths, conversation,
// sampling) and what it must meet (objectives and answer checks).

package config

import (
	"path/filepath"
)

// Scenario describes one kind of request and the objectives it is judged by.
type Scenario struct {
	Name string `yaml:"name"`
	// Prompt, when set, is sent as is (after the nonce) instead of a synthetic prompt.
	Prompt string `yaml:"prompt,omitempty"`
	// PromptDataset, when set, draws each prompt (after the nonce) from a
	// file of real conversations instead.
	PromptDataset      *PromptDataset `yaml:"prompt_dataset,omitempty"`
	PromptTokens       Distribution   `yaml:"prompt_tokens,omitempty"`
	OutputTokens       Distribution   `yaml:"output_tokens,omitempty"`
	SharedPrefixTokens int            `yaml:"shared_prefix_tokens,omitempty"`
	Sampling           Sampling       `yaml:"sampling,omitempty"`
	SLO                SLO            `yaml:"slo,omitempty"`
	Quality            *Quality       `yaml:"quality,omitempty"`
	// Conversation, when set, makes each arrival a multi-turn session.
	Conversation *Conversation `yaml:"conversation,omitempty"`
	// Stream false asks for the answer in one body (chat, completions and
	// responses); unset is true.
	Stream *bool `yaml:"stream,omitempty"`
	// Images, when set, sends synthetic images with each chat request.
	Images *Images `yaml:"images,omitempty"`
	// Inputs is the texts per request of an embeddings target; 0 means 1.
	Inputs int `yaml:"inputs,omitempty"`
	// Documents is the documents a rerank target ranks against the prompt
	// (the query), 0 meaning 1; DocumentTokens their length, 0 meaning the
	// query's.
	Documents      int `yaml:"documents,omitempty"`
	DocumentTokens int `yaml:"document_tokens,omitempty"`
	// Structured asks for function calls or a response format.
	Structured `yaml:",inline"`
	// Golden, when set, draws each prompt (after the nonce) from a golden
	// set, each answer held to its line's checks.
	Golden *Golden `yaml:"golden,omitempty"`
	// Audio is what each request of a transcriptions target uploads.
	Audio *Audio `yaml:"audio,omitempty"`
	// Adapters, when set, spread the requests over LoRA adapters by weight:
	// each request's model is its adapter's name.
	Adapters []Adapter `yaml:"adapters,omitempty"`
}

// MaxDocumentTokens bounds document_tokens.
const MaxDocumentTokens = 32768

// DocumentCount is the documents per rerank request.
func (s *Scenario) DocumentCount() int { return max(s.Documents, 1) }

// MaxInputs bounds inputs, so one answer's vectors stay a few MiB.
const MaxInputs = 512

// InputCount is the texts per embeddings request.
func (s *Scenario) InputCount() int { return max(s.Inputs, 1) }

// DatasetShareGPT is the one dataset format: JSONL of ShareGPT conversations.
const DatasetShareGPT = "sharegpt"

// PromptDataset draws a scenario's prompts from a file of real conversations.
type PromptDataset struct {
	// File is read at load (by prompt's check); a relative path is
	// relative to the configuration file.
	File   string `yaml:"file"`
	Format string `yaml:"format,omitempty"`
}

// Sampling holds request sampling parameters; unset fields are not sent.
type Sampling struct {
	Temperature *float64 `yaml:"temperature,omitempty"`
	TopP        *float64 `yaml:"top_p,omitempty"`
	Seed        *int64   `yaml:"seed,omitempty"`
}

// DefaultScenario's values apply to fields left out.
var DefaultScenario = Scenario{
	PromptTokens: Distribution{Kind: DistFixed, Value: 128},
	OutputTokens: Distribution{Kind: DistFixed, Value: 64},
	SLO:          SLO{TargetRatio: 0.99},
}

// UnmarshalYAML applies defaults. The func-style signature keeps the decoder's strict mode.
func (s *Scenario) UnmarshalYAML(unmarshal func(any) error) error {
	*s = DefaultScenario
	type plain Scenario
	return unmarshal((*plain)(s))
}

// SetDirectory makes the files s names relative to dir, the configuration
// file's directory, unless they are absolute.
func (s *Scenario) SetDirectory(dir string) {
	if d := s.PromptDataset; d != nil && d.File != "" && !filepath.IsAbs(d.File) {
		d.File = filepath.Join(dir, d.File)
	}
	s.Golden.setDirectory(dir)
	s.Audio.setDirectory(dir)
}

// Validate adds to errs what is wrong with s, written at path
// (scenarios[2]), and fills in what follows from its other fields: a
// distribution's kind, a dataset's format, a conversation's follow-up
// lengths, the compiled quality regex. Its name is the caller's to check,
// beside its siblings' names.
func (s *Scenario) Validate(path string, errs *FieldErrors) {
	s.validatePrompt(path, errs)
	s.validateGolden(path, errs)
	s.OutputTokens.validate(path+".output_tokens", errs)
	if c := s.Conversation; c != nil {
		c.validate(path+".conversation", s, errs)
	}
	if t := s.Sampling.Temperature; t != nil {
		errs.Within(path+".sampling.temperature", *t, 0, 2, "")
	}
	if p := s.Sampling.TopP; p != nil {
		errs.Above(path+".sampling.top_p", *p, 0, 1, "")
	}
	s.SLO.validate(path+".slo", errs)
	if s.Inputs != 0 {
		errs.IntWithin(path+".inputs", s.Inputs, 1, MaxInputs, "")
	}
	if s.Documents != 0 {
		errs.IntWithin(path+".documents", s.Documents, 1, MaxInputs, "")
	}
	if s.DocumentTokens != 0 {
		errs.IntWithin(path+".document_tokens", s.DocumentTokens, 1, MaxDocumentTokens, "")
	}
	if q := s.Quality; q != nil {
		q.Validate(path+".quality", errs)
	}
	s.validateModes(path, errs)
	s.validateAudio(path, errs)
	s.validateAdapters(path, errs)
	s.Structured.validate(path, errs)
	if s.Conversation != nil && len(s.Tools) > 0 {
		errs.Add(path+".tools", "cannot be used with conversation: a later turn would have to answer the calls")
	}
}

// ChecksAnswer reports whether the answer's text is checked: by quality, a
// golden line's checks, against a JSON response format, or a transcript
// against its clip's reference.
func (s *Scenario) ChecksAnswer() bool {
	return s.Quality != nil || s.Golden != nil || s.ChecksFormat() || s.ChecksTranscript()
}

// validatePrompt checks what the prompt is made of: a dataset, a literal
// prompt, or synthetic text of prompt_tokens with a shared prefix.
func (s *Scenario) validatePrompt(path string, errs *FieldErrors) {
	if d := s.PromptDataset; d != nil {
		if s.Prompt != "" {
			errs.Add(path+".prompt_dataset", "cannot be used with a literal prompt")
		}
		if s.SharedPrefixTokens > 0 {
			errs.Add(path+".shared_prefix_tokens", "cannot be used with prompt_dataset")
		}
		d.validate(path+".prompt_dataset", errs)
	} else if s.Prompt != "" {
		if s.SharedPrefixTokens > 0 {
			errs.Add(path+".shared_prefix_tokens", "cannot be used with a literal prompt")
		}
		if len(s.Prompt) > 4<<20 {
			errs.Add(path+".prompt", "%d bytes must be at most 4 MiB", len(s.Prompt))
		}
	} else {
		s.PromptTokens.validate(path+".prompt_tokens", errs)
		if s.SharedPrefixTokens < 0 {
			errs.Add(path+".shared_prefix_tokens", "%d must not be negative", s.SharedPrefixTokens)
		} else if s.SharedPrefixTokens > 0 && s.SharedPrefixTokens >= s.PromptTokens.Minimum() {
			errs.Add(path+".shared_prefix_tokens", "%d must be less than the smallest prompt length (%d)", s.SharedPrefixTokens, s.PromptTokens.Minimum())
		}
	}
}

func (d *PromptDataset) validate(path string, errs *FieldErrors) {
	if d.Format == "" {
		d.Format = DatasetShareGPT
	}
	if d.Format != DatasetShareGPT {
		errs.Add(path+".format", "%q must be %q", d.Format, DatasetShareGPT)
	}
	if d.File == "" {
		errs.Add(path+".file", "is required")
	}
}
