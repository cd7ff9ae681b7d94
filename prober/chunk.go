package prober

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/valyala/fastjson"
)

// A chat or completions stream carries one chunk per token, so its decoding
// is most of the prober's own CPU per request after the reads themselves.
// The chunk is parsed once without reflection by a parser reused across
// events, and only the fields llmprobe reads are taken out, with
// encoding/json's rules: null leaves a field empty, a wrong type is a
// malformed chunk, keys match case-insensitively, the last duplicate wins,
// and invalid UTF-8 becomes U+FFFD.

// chunkParsers are reused across events and streams.
var chunkParsers fastjson.ParserPool

// decodeChunk parses data, a chat or completions chunk, into c, which
// must be empty but for its choices' backing array, which it reuses. The
// output deltas it reads may share data's memory.
func decodeChunk(data []byte, c *streamChunk) error {
	if scanChunk(data, c) {
		return nil
	}
	*c = streamChunk{Choices: c.Choices[:0]}
	return parseChunk(data, c)
}

// parseChunk parses data with the full parser. fastjson reads numbers
// encoding/json refuses (01, 1., .5), so encoding/json says first whether
// data is JSON at all, unless it reads the chunk itself.
func parseChunk(data []byte, c *streamChunk) error {
	if bytes.Contains(data, []byte(`\ud`)) || bytes.Contains(data, []byte(`\uD`)) {
		return unmarshalChunk(data, c)
	}
	if !json.Valid(data) {
		var any struct{}
		return json.Unmarshal(data, &any)
	}
	p := chunkParsers.Get()
	defer chunkParsers.Put(p)
	v, err := p.ParseBytes(data)
	if err != nil {
		return err
	}
	return c.take(v)
}

// unmarshalChunk reads data with encoding/json itself. fastjson reads a
// surrogate's escape that is not half of a pair as the escape's text, or
// drops it, where encoding/json reads U+FFFD; such escapes are rare. The
// model is read apart, so an error names the chunk's own fields.
func unmarshalChunk(data []byte, c *streamChunk) error {
	var named struct {
		Model string `json:"model"`
	}
	if err := json.Unmarshal(data, c); err != nil {
		return err
	}
	if err := json.Unmarshal(data, &named); err != nil {
		return err
	}
	c.Model = named.Model
	return nil
}

// errChunkType is a field of the wrong JSON type, named by its path.
type errChunkType struct {
	path string
	got  fastjson.Type
}

func (e errChunkType) Error() string {
	return fmt.Sprintf("cannot read %s %s", e.got, e.path)
}

// object visits the members of v, an object or null, in order, each key
// in ASCII lower case: encoding/json matches names case-insensitively.
func object(v *fastjson.Value, path string, member func(key []byte, v *fastjson.Value) error) error {
	switch v.Type() {
	case fastjson.TypeNull:
		return nil
	case fastjson.TypeObject:
	default:
		return errChunkType{path, v.Type()}
	}
	o, _ := v.Object()
	var err error
	o.Visit(func(key []byte, v *fastjson.Value) {
		if err != nil {
			return
		}
		if !lowerASCII(key) {
			key = foldKey(key) // rare: engines write lower-case keys
		}
		err = member(key, v)
	})
	return err
}

// lowerASCII says whether key is lower-case ASCII, as engines write keys;
// only another needs folding to meet the names llmprobe reads.
func lowerASCII(key []byte) bool {
	for _, c := range key {
		if c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return true
}

// foldKey is key as encoding/json matches it against a lower-case ASCII
// name: each rune folded to the least of its case orbit (a Kelvin sign to
// K, a long s to S), then lower-cased.
func foldKey(key []byte) []byte {
	return bytes.Map(func(r rune) rune {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		if 'A' <= least && least <= 'Z' {
			least += 'a' - 'A'
		}
		return least
	}, key)
}

func (c *streamChunk) take(v *fastjson.Value) error {
	return object(v, "chunk", func(key []byte, v *fastjson.Value) error {
		var err error
		switch string(key) {
		case "choices":
			err = c.takeChoices(v)
		case "usage":
			if v.Type() == fastjson.TypeNull {
				c.Usage = nil
				return nil
			}
			if c.Usage == nil { // a second usage adds to the first, as in encoding/json
				c.Usage = &usage{}
			}
			err = c.Usage.take(v)
		case "error":
			c.Error = raw(v)
		case "metrics":
			c.Metrics = raw(v)
		case "timings":
			c.Timings = raw(v)
		case "model":
			c.Model, err = text(v, "model")
		}
		return err
	})
}

func (c *streamChunk) takeChoices(v *fastjson.Value) error {
	switch v.Type() {
	case fastjson.TypeNull:
		c.Choices = nil
		return nil
	case fastjson.TypeArray:
	default:
		return errChunkType{"choices", v.Type()}
	}
	items, _ := v.Array()
	c.Choices = c.Choices[:0]
	for _, item := range items {
		c.Choices = append(c.Choices, choice{})
		ch := &c.Choices[len(c.Choices)-1]
		err := object(item, "choices[]", func(key []byte, v *fastjson.Value) error {
			var err error
			switch string(key) {
			case "text":
				ch.Text, err = text(v, "text")
			case "finish_reason":
				ch.FinishReason, err = text(v, "finish_reason")
			case "delta":
				err = ch.Delta.take(v)
			}
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (d *choiceDelta) take(v *fastjson.Value) error {
	return object(v, "delta", func(key []byte, v *fastjson.Value) error {
		var err error
		switch string(key) {
		case "content":
			d.Content, err = text(v, "content")
		case "reasoning_content":
			d.ReasoningContent, err = text(v, "reasoning_content")
		case "reasoning":
			d.Reasoning, err = text(v, "reasoning")
		case "refusal":
			d.Refusal, err = text(v, "refusal")
		case "tool_calls":
			d.ToolCalls, err = rawItems(v, "tool_calls")
		}
		return err
	})
}

func (u *usage) take(v *fastjson.Value) error {
	return object(v, "usage", func(key []byte, v *fastjson.Value) error {
		var err error
		switch string(key) {
		case "prompt_tokens":
			u.PromptTokens, err = integer(v, "prompt_tokens")
		case "completion_tokens":
			u.CompletionTokens, err = integer(v, "completion_tokens")
		case "reasoning_tokens":
			u.ReasoningTokens, err = integer(v, "reasoning_tokens")
		case "completion_tokens_details":
			if v.Type() == fastjson.TypeNull {
				u.CompletionTokensDetails = nil
			} else {
				if u.CompletionTokensDetails == nil {
					u.CompletionTokensDetails = &struct {
						ReasoningTokens int `json:"reasoning_tokens"`
					}{}
				}
				err = object(v, "completion_tokens_details", func(key []byte, v *fastjson.Value) (err error) {
					if string(key) == "reasoning_tokens" {
						u.CompletionTokensDetails.ReasoningTokens, err = integer(v, "reasoning_tokens")
					}
					return err
				})
			}
		case "prompt_tokens_details":
			if v.Type() == fastjson.TypeNull {
				u.PromptTokensDetails = nil
			} else {
				if u.PromptTokensDetails == nil {
					u.PromptTokensDetails = &promptDetails{}
				}
				err = object(v, "prompt_tokens_details", func(key []byte, v *fastjson.Value) error {
					if string(key) != "cached_tokens" {
						return nil
					}
					if v.Type() == fastjson.TypeNull {
						u.PromptTokensDetails.CachedTokens = nil
						return nil
					}
					n, err := integer(v, "cached_tokens")
					u.PromptTokensDetails.CachedTokens = &n
					return err
				})
			}
		}
		return err
	})
}

// text is a string or null; invalid UTF-8 becomes U+FFFD, byte by byte.
func text(v *fastjson.Value, path string) (string, error) {
	switch v.Type() {
	case fastjson.TypeNull:
		return "", nil
	case fastjson.TypeString:
	default:
		return "", errChunkType{path, v.Type()}
	}
	b, _ := v.StringBytes()
	if utf8.Valid(b) {
		return string(b), nil
	}
	var out []byte
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		out = utf8.AppendRune(out, r) // RuneError for an invalid byte
		b = b[n:]
	}
	return string(out), nil
}

// integer is an integral number or null, as encoding/json reads an int.
func integer(v *fastjson.Value, path string) (int, error) {
	switch v.Type() {
	case fastjson.TypeNull:
		return 0, nil
	case fastjson.TypeNumber:
		n, err := v.Int()
		if err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		return n, nil
	}
	return 0, errChunkType{path, v.Type()}
}

// raw is v's JSON, as json.RawMessage keeps a field.
func raw(v *fastjson.Value) json.RawMessage { return v.MarshalTo(nil) }

// rawItems is an array's items, each as its JSON, or nil for null.
func rawItems(v *fastjson.Value, path string) ([]json.RawMessage, error) {
	switch v.Type() {
	case fastjson.TypeNull:
		return nil, nil
	case fastjson.TypeArray:
	default:
		return nil, errChunkType{path, v.Type()}
	}
	items, _ := v.Array()
	out := make([]json.RawMessage, len(items))
	for i, item := range items {
		out[i] = raw(item)
	}
	return out, nil
}
