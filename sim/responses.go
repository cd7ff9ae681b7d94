package sim

import (
	"github.com/llmprobe/llmprobe/sim/internal/responses"
)

// endpoint is the API a request came in on.
type endpoint int

const (
	apiCompletions endpoint = iota
	apiChat
	apiResponses
)

// endEvents closes a Responses API stream: its usage in response.completed.
func (st *streamWriter) endEvents(sent int) {
	var u *responses.Usage
	if st.includeUsage {
		u = responsesUsage(st.usage(sent))
	}
	st.writeRaw(st.events.End(u))
}

// responsesUsage is a chat usage in the Responses API's terms; nil for nil.
func responsesUsage(full *usageJSON) *responses.Usage {
	if full == nil {
		return nil
	}
	u := &responses.Usage{Input: full.PromptTokens, Output: full.CompletionTokens}
	if d := full.CompletionTokensDetails; d != nil {
		u.Reasoning = d.ReasoningTokens
	}
	if d := full.PromptTokensDetails; d != nil {
		u.Cached = &d.CachedTokens
	}
	return u
}
