package config

import (
	"path/filepath"
)

// ObjectiveQuality names the share of checked answers that passed their
// checks (slo.quality_ratio): the `objective` label of its target ratio,
// and its gate slo_quality.
const ObjectiveQuality = "quality"

// Golden draws a scenario's prompts from a golden set: a JSONL file of
// prompts (or message lists), each with the checks its answer must pass.
type Golden struct {
	// File is read at load (by prompt's check); a relative path is
	// relative to the configuration file.
	File string `yaml:"file"`
}

func (g *Golden) setDirectory(dir string) {
	if g != nil && g.File != "" && !filepath.IsAbs(g.File) {
		g.File = filepath.Join(dir, g.File)
	}
}

// validateGolden refuses what a golden set cannot be used with: its lines
// are the prompts, so no other prompt source applies.
func (s *Scenario) validateGolden(path string, errs *FieldErrors) {
	if r := s.SLO.QualityRatio; r != 0 {
		if !(r > 0 && r < 1) {
			errs.Add(path+".slo.quality_ratio", "%g must be within (0, 1), like 0.95", r)
		} else if !s.ChecksAnswer() {
			errs.Add(path+".slo.quality_ratio", "needs answers to check: set golden or quality")
		}
	}
	g := s.Golden
	if g == nil {
		return
	}
	if g.File == "" {
		errs.Add(path+".golden.file", "is required")
	}
	for _, other := range []struct {
		name string
		set  bool
	}{{"prompt", s.Prompt != ""}, {"prompt_dataset", s.PromptDataset != nil}, {"conversation", s.Conversation != nil}, {"shared_prefix_tokens", s.SharedPrefixTokens != 0}} {
		if other.set {
			errs.Add(path+"."+other.name, "cannot be used with golden: the golden set's lines are the prompts")
		}
	}
}
