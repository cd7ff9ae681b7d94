package prober

import (
	"io"
	"net/http"
	"strings"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/lib/sse"
	"github.com/llmprobe/llmprobe/prompt"
)

// completions is the legacy Completions API (/v1/completions): the prompt
// is one text, a conversation's earlier messages before it; a stream is
// chunks of choices' texts, an unstreamed answer a choice's text.
type completions struct{}

func (completions) path(dialect) string { return "/v1/completions" }

func (completions) traits() traits { return traits{tokens: true} }

func (completions) body(model string, r Request, extra map[string]any, _ dialect) (payload, error) {
	return textBody(textRequest(config.APICompletions, model, r, extra), r)
}

// fields sets the completions API's own fields: its output cap and stream
// options, a response format, and the prompt.
func (completions) fields(body map[string]any, r BodyRequest, content string) {
	choicesFields(body, r)
	structuredFields(body, &r.Structured, false)
	body["prompt"] = completionsPrompt(r.History, content)
}

func (completions) event(ev sse.Event, c *streamChunk) (bool, string, error) {
	return choicesEvent(ev, c)
}

func (completions) whole(body io.Reader, _ http.Header, r Request, keep int, _ dialect) (*answer, error) {
	return readText(body, r.MaxTokens, keep, readChoices)
}

// completionsPrompt is a conversation as one text for the completions API:
// its earlier messages in order, a blank line apart, then the new one, so
// every turn's prompt starts with the one before it and the prefix cache can
// serve it.
func completionsPrompt(history []prompt.Message, content string) string {
	if len(history) == 0 {
		return content
	}
	var sb strings.Builder
	for _, m := range history {
		sb.WriteString(m.Content)
		sb.WriteString("\n\n")
	}
	sb.WriteString(content)
	return sb.String()
}
