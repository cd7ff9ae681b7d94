package config

import "time"

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
	// (which is prompt_tokens long); unset, it is prompt_tokens.
	FollowupTokens Distribution `yaml:"followup_tokens,omitempty"`
	// ThinkTime is the pause between an answer and the next user message.
	ThinkTime Duration `yaml:"think_time,omitempty"`
}

// Bounds of a conversation.
const (
	MaxTurns     = 32
	maxThinkTime = 10 * time.Minute
	// turnTemplateTokens is what a chat template adds around one message,
	// estimated generously (real templates add 3 to 8).
	turnTemplateTokens = 8
)

// TurnsOf is how many requests one session of s sends: 1 for a scenario
// that is no conversation.
func (s Scenario) TurnsOf() int {
	if s.Conversation == nil {
		return 1
	}
	return s.Conversation.Turns
}

// Followup is the length distribution of user messages after the first.
func (c *Conversation) Followup(s Scenario) Distribution {
	if c.FollowupTokens.Kind == "" {
		return s.PromptTokens
	}
	return c.FollowupTokens
}

// conversationTokens is the longest prompt a session sends: its last turn,
// with every earlier message and answer.
func (s Scenario) conversationTokens(first int) int {
	c := s.Conversation
	if c == nil {
		return first
	}
	later := c.Followup(s).Maximum() + s.OutputTokens.Maximum() + 2*turnTemplateTokens
	return first + (c.Turns-1)*later
}

func (c *Conversation) validate(path string, s *Scenario, errs *errList) {
	errs.intWithin(path+".turns", c.Turns, 2, MaxTurns, "")
	errs.durationWithin(path+".think_time", c.ThinkTime, 0, maxThinkTime, false)
	switch {
	case s.Prompt != "":
		errs.add(path, "cannot be used with a literal prompt: every turn needs a new user message")
	case s.PromptDataset != nil:
		errs.add(path, "cannot be used with prompt_dataset: its conversations are sent as single prompts")
	}
	if c.FollowupTokens.Kind != "" {
		c.FollowupTokens.validate(path+".followup_tokens", errs)
	}
}

// sessionSpan bounds how long one session of s lasts against target t:
// every turn to its timeout, and the think times between them.
func (s Scenario) sessionSpan(timeout time.Duration) time.Duration {
	if s.Conversation == nil {
		return timeout
	}
	n := time.Duration(s.Conversation.Turns)
	return n*timeout + (n-1)*s.Conversation.ThinkTime.Std()
}
