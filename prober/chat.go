package prober

import (
	"io"
	"net/http"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/lib/sse"
	"github.com/llmprobe/llmprobe/prompt"
)

// chat is the Chat Completions API (/v1/chat/completions): the prompt is
// the last user message after a conversation's earlier ones, with a vision
// scenario's images as image_url parts; a stream is chunks of choices'
// deltas (content, reasoning, tool calls), an unstreamed answer a message.
type chat struct{}

func (chat) path(dialect) string { return "/v1/chat/completions" }

func (chat) traits() traits { return traits{tokens: true} }

func (chat) body(model string, r Request, extra map[string]any, _ dialect) (payload, error) {
	return textBody(textRequest(config.APIChat, model, r, extra), r)
}

// fields sets chat's own fields: its output cap and stream options, the
// tools and response format in chat's shape, and the messages.
func (chat) fields(body map[string]any, r BodyRequest, content string) {
	choicesFields(body, r)
	structuredFields(body, &r.Structured, false)
	body["messages"] = messages(r.History, content)
}

func (chat) event(ev sse.Event, c *streamChunk) (bool, string, error) { return choicesEvent(ev, c) }

func (chat) whole(body io.Reader, _ http.Header, r Request, keep int, _ dialect) (*answer, error) {
	return readText(body, r.MaxTokens, keep, readChoices)
}

// messages is a conversation's earlier messages, then the new user message.
func messages(history []prompt.Message, content string) []map[string]string {
	out := make([]map[string]string, 0, len(history)+1)
	for _, m := range history {
		out = append(out, map[string]string{"role": m.Role, "content": m.Content})
	}
	return append(out, map[string]string{"role": "user", "content": content})
}
