package prober

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"strings"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prompt"
)

// BodyRequest is what a streamed request asks for.
type BodyRequest struct {
	API       config.API
	Model     string
	MaxTokens int
	// History is a conversation's earlier messages; Text and Tail are the
	// new one. Tail is sent from where it is: the body holds no copy of it.
	History    []prompt.Message
	Text, Tail string
	Sampling   config.Sampling
	// Extra is the target's extra_body, beneath the fields llmprobe sets.
	Extra map[string]any
	// Unstreamed asks for the answer in one body (stream: false).
	Unstreamed bool
	// Images are data URIs sent after Text as image_url parts of the new
	// chat message, from where they are: the body holds no copy of them.
	Images [][]byte
	// Structured is the scenario's tools and response format.
	Structured config.Structured
}

// fields is the request's JSON object, with content as the prompt.
func (r BodyRequest) fields(content string) map[string]any {
	body := make(map[string]any, 8+len(r.Extra))
	maps.Copy(body, r.Extra)
	body["model"] = r.Model
	body["stream"] = !r.Unstreamed
	if r.Unstreamed {
		// Engines refuse stream_options without a stream (vLLM: 400).
		delete(body, "stream_options")
	}
	structuredFields(body, r.API, &r.Structured)
	if r.API == config.APIResponses {
		responsesFields(body, r.MaxTokens, r.History, content)
		return sampling(r.Sampling, body)
	}
	body["max_tokens"] = r.MaxTokens
	if !r.Unstreamed {
		// include_usage gives exact token counts; extra_body may add engine
		// options such as vLLM's continuous_usage_stats.
		streamOptions := map[string]any{}
		if extra, ok := r.Extra["stream_options"].(map[string]any); ok {
			maps.Copy(streamOptions, extra)
		}
		streamOptions["include_usage"] = true
		body["stream_options"] = streamOptions
	}
	if r.API == config.APICompletions {
		body["prompt"] = completionsPrompt(r.History, content)
	} else {
		body["messages"] = messages(r.History, content)
	}
	return sampling(r.Sampling, body)
}

// sampling adds the scenario's sampling parameters to body.
func sampling(s config.Sampling, body map[string]any) map[string]any {
	if s.Temperature != nil {
		body["temperature"] = *s.Temperature
	}
	if s.TopP != nil {
		body["top_p"] = *s.TopP
	}
	if s.Seed != nil {
		body["seed"] = *s.Seed
	}
	return body
}

// messages is a conversation's earlier messages, then the new user message.
func messages(history []prompt.Message, content string) []map[string]string {
	out := make([]map[string]string, 0, len(history)+1)
	for _, m := range history {
		out = append(out, map[string]string{"role": m.Role, "content": m.Content})
	}
	return append(out, map[string]string{"role": "user", "content": content})
}

// promptSentinel stands for the prompt when the request is marshalled; the
// body is then sent as the bytes around it with the prompt written between.
const promptSentinel = "\x00llmprobe:prompt\x00"

// Body is a request's JSON body in pieces: the marshalled request up to the
// prompt's opening quote, the prompt's Text and Tail, and the rest, with
// each image between the pieces around it. A long prompt's Tail is the
// builder's shared body, sent from where it is: the request holds no copy
// of it, nor of its images.
type Body struct {
	head       []byte
	text, tail jsonString
	closing    [][]byte
}

// NewBody is r's body: byte for byte what json.Marshal of the request with
// the whole prompt and its images would write.
func NewBody(r BodyRequest) (*Body, error) {
	fields := r.fields(promptSentinel)
	withImages(fields, imageSentinels(len(r.Images)))
	out, err := json.Marshal(fields)
	if err != nil {
		return nil, err
	}
	// The sentinel as it is written inside a JSON string: where the prompt
	// goes, whether it is the whole string (a message's content) or its end
	// (a completions prompt after a conversation's history).
	quoted, _ := json.Marshal(promptSentinel)
	escaped := quoted[1 : len(quoted)-1]
	if i := bytes.Index(out, escaped); i >= 0 && bytes.Count(out, escaped) == 1 {
		if closing, ok := spliceImages(out[i+len(escaped):], r.Images); ok {
			b := &Body{head: out[:i], closing: closing, text: escapeJSON(r.Text), tail: escapeJSON(r.Tail)}
			return b.inline(), nil
		}
	}
	// extra_body holds a sentinel too: marshalled whole, a copy.
	fields = r.fields(r.Text + r.Tail)
	withImages(fields, imageStrings(r.Images))
	out, err = json.Marshal(fields)
	return &Body{head: out}, err
}

// inline makes a short body one buffer again: net/http writes a body it
// knows is in memory together with the headers, one write as a short
// request always was, but flushes the headers first for any other reader.
func (b *Body) inline() *Body {
	if b.Size() > config.MaxInlineBody {
		return b
	}
	flat := make([]byte, 0, b.Size())
	flat = append(flat, b.head...)
	flat = b.text.appendTo(flat)
	flat = b.tail.appendTo(flat)
	return &Body{head: append(flat, bytes.Join(b.closing, nil)...)}
}

// Size is the body's length in bytes, its Content-Length.
func (b *Body) Size() int64 {
	n := len(b.head) + b.text.size() + b.tail.size()
	for _, c := range b.closing {
		n += len(c)
	}
	return int64(n)
}

// Open reads the body from its start; each call reads it again (GetBody).
func (b *Body) Open() io.Reader {
	if int64(len(b.head)) == b.Size() {
		return bytes.NewReader(b.head) // inline: sent with the headers
	}
	pieces := make([]io.Reader, 0, 3+len(b.closing))
	pieces = append(pieces, bytes.NewReader(b.head), b.text.reader(), b.tail.reader())
	for _, c := range b.closing {
		pieces = append(pieces, bytes.NewReader(c))
	}
	return readOnly{io.MultiReader(pieces...)}
}

// readOnly hides a MultiReader's WriteTo, which makes a 32 KiB buffer per
// call: net/http calls it once more after Content-Length bytes, to see
// that nothing is left.
type readOnly struct{ io.Reader }

// jsonString is a string as it is written inside a JSON string: itself when
// nothing in it needs escaping (synthetic words never do), else escaped.
type jsonString struct {
	plain   string
	escaped []byte
}

// escapeJSON escapes s as json.Marshal does, and copies it only when some
// byte needs escaping: a control character, a quote or backslash, one of
// the <>& that json.Marshal escapes for HTML, or any non-ASCII byte (invalid
// UTF-8, U+2028 and U+2029 are escaped too; the rest is left to
// json.Marshal). Text and Tail split between words, so escaping each alone
// writes what escaping them together would.
func escapeJSON(s string) jsonString {
	for i := 0; i < len(s); i++ {
		if needsEscape(s[i]) {
			q, _ := json.Marshal(s) // a string always marshals
			return jsonString{escaped: q[1 : len(q)-1]}
		}
	}
	return jsonString{plain: s}
}

// needsEscape reports whether json.Marshal writes c other than as itself
// inside a string, or might (any non-ASCII byte).
func needsEscape(c byte) bool {
	return c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&'
}

func (j jsonString) size() int {
	if j.escaped != nil {
		return len(j.escaped)
	}
	return len(j.plain)
}

func (j jsonString) appendTo(b []byte) []byte {
	if j.escaped != nil {
		return append(b, j.escaped...)
	}
	return append(b, j.plain...)
}

func (j jsonString) reader() io.Reader {
	if j.escaped != nil {
		return bytes.NewReader(j.escaped)
	}
	return strings.NewReader(j.plain)
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
