package prober

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// fields is the request's JSON object, with content as the prompt: the
// target's extra_body beneath the fields every API of tokens sets, then the
// API's own, then the scenario's sampling.
func (r BodyRequest) fields(content string) map[string]any {
	body := make(map[string]any, 8+len(r.Extra))
	maps.Copy(body, r.Extra)
	body["model"] = r.Model
	body["stream"] = !r.Unstreamed
	if r.Unstreamed {
		// Engines refuse stream_options without a stream (vLLM: 400).
		delete(body, "stream_options")
	}
	if a, ok := apiOf(r.API).(textAPI); ok {
		a.fields(body, r, content)
	}
	return sampling(r.Sampling, body)
}

// textAPI is an API whose answers are tokens: it sets its own fields of a
// request's JSON body, content standing for the prompt.
type textAPI interface {
	api
	fields(body map[string]any, r BodyRequest, content string)
}

// textRequest is r as an API of tokens asks for it.
func textRequest(a config.API, model string, r Request, extra map[string]any) BodyRequest {
	return BodyRequest{
		API: a, Model: model, MaxTokens: r.MaxTokens,
		History: r.Prompt.History, Text: r.Prompt.Text, Tail: r.Prompt.Tail,
		Sampling: r.Scenario.Sampling, Extra: extra,
		Unstreamed: !r.Scenario.Streamed(), Images: prompt.ImagesOf(r.Scenario.Images, r.Prompt.Text),
		Structured: r.Scenario.Structured,
	}
}

// textBody is the payload of br, a request of an API of tokens.
func textBody(br BodyRequest, r Request) (payload, error) {
	b, err := NewBody(br)
	if err != nil {
		return payload{}, err
	}
	asks := fmt.Sprintf("prompt_tokens~%d max_tokens=%d%s", r.Prompt.RequestedTokens, r.MaxTokens, imagesAsked(r.Scenario, b.Size()))
	if br.Unstreamed {
		asks += ", stream: false"
	}
	return payload{open: b.Open, size: b.Size(), asks: asks, promptTokens: r.Prompt.RequestedTokens}, nil
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

// promptSentinel stands for the prompt when the request is marshalled; the
// body is then sent as the bytes around it with the prompt written between.
const promptSentinel = "\x00llmprobe:prompt\x00"

// body is a request's JSON body in pieces: the marshalled request up to the
// prompt's opening quote, the prompt's Text and Tail, and the rest, with
// each image between the pieces around it. A long prompt's Tail is the
// builder's shared body, sent from where it is: the request holds no copy
// of it, nor of its images.
type body struct {
	head       []byte
	text, tail jsonString
	closing    [][]byte
}

// NewBody is r's body: byte for byte what json.Marshal of the request with
// the whole prompt and its images would write.
func NewBody(r BodyRequest) (*body, error) {
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
			b := &body{head: out[:i], closing: closing, text: escapeJSON(r.Text), tail: escapeJSON(r.Tail)}
			return b.inline(), nil
		}
	}
	// extra_body holds a sentinel too: marshalled whole, a copy.
	fields = r.fields(r.Text + r.Tail)
	withImages(fields, imageStrings(r.Images))
	out, err = json.Marshal(fields)
	return &body{head: out}, err
}

// inline makes a short body one buffer again: net/http writes a body it
// knows is in memory together with the headers, one write as a short
// request always was, but flushes the headers first for any other reader.
func (b *body) inline() *body {
	if b.Size() > config.MaxInlineBody {
		return b
	}
	flat := make([]byte, 0, b.Size())
	flat = append(flat, b.head...)
	flat = b.text.appendTo(flat)
	flat = b.tail.appendTo(flat)
	return &body{head: append(flat, bytes.Join(b.closing, nil)...)}
}

// Size is the body's length in bytes, its Content-Length.
func (b *body) Size() int64 {
	n := len(b.head) + b.text.size() + b.tail.size()
	for _, c := range b.closing {
		n += len(c)
	}
	return int64(n)
}

// Open reads the body from its start; each call reads it again (GetBody).
func (b *body) Open() io.Reader {
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
