package config

import (
	"time"
)

// Conversation makes a scenario a multi-turn session: each turn sends the
// whole history (every earlier user message and the answer the server gave)
// plus a new user message, after a think time, as a chat user does. From turn
// 2 on, the engine's prefix cache holds the history, so TTFT by turn shows
// whether prefix caching works.
type Conversation struct {
	// Turns is how many requests a session sends; the turn is a label and a
	// report dimension, so it also bounds their cardinality.
	Turns int `yaml:"turns"`
	// FollowupTokens is the length of each user message after the first
	// (which is prompt_tokens long); unset, the load makes it prompt_tokens.
	FollowupTokens Distribution `yaml:"followup_tokens,omitempty"`
	// ThinkTime is the pause between an answer and the next user message.
	ThinkTime Duration `yaml:"think_time,omitempty"`
}

// Bounds of a conversation.
const (
	MaxTurns     = 32
	maxThinkTime = 10 * time.Minute
)

// TurnsOf is how many requests one session of s sends: 1 for a scenario
// that is no conversation.
func (s Scenario) TurnsOf() int {
	if s.Conversation == nil {
		return 1
	}
	return s.Conversation.Turns
}

func (c *Conversation) validate(path string, s *Scenario, errs *FieldErrors) {
	errs.IntWithin(path+".turns", c.Turns, 2, MaxTurns, "")
	errs.DurationWithin(path+".think_time", c.ThinkTime, 0, maxThinkTime, false)
	switch {
	case s.Prompt != "":
		errs.Add(path, "cannot be used with a literal prompt: every turn needs a new user message")
	case s.PromptDataset != nil:
		errs.Add(path, "cannot be used with prompt_dataset: its conversations are sent as single prompts")
	}
	if c.FollowupTokens.Kind != "" {
		c.FollowupTokens.validate(path+".followup_tokens", errs)
	} else {
		c.FollowupTokens = s.PromptTokens
	}
}
