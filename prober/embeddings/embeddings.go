// Package embeddings is the wire format of /v1/embeddings: the request
// body and the checks an answer must pass (one vector per input, one
// dimension, finite numbers).
package embeddings

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"strings"
)

// Path is the endpoint under the server's root.
const Path = "/v1/embeddings"

// maxBody bounds what one answer makes the prober hold: 512 inputs of
// 4,096 dimensions written as JSON text.
const maxBody = 64 << 20

// Body is the request's JSON: extra (the target's extra_body) beneath
// model and input.
func Body(model string, inputs []string, extra map[string]any) ([]byte, error) {
	body := make(map[string]any, 2+len(extra))
	maps.Copy(body, extra)
	body["model"] = model
	body["input"] = inputs
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("embeddings request body: %w", err)
	}
	return b, nil
}

// Inputs are n texts made from one prompt, each numbered first so no two
// are the same and none repeats another request's (the prompt's nonce).
func Inputs(text, tail string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%d. %s%s", i+1, text, tail)
	}
	return out
}

// Answer is what a checked answer reports.
type Answer struct {
	Vectors, Dimension int
	// PromptTokens is usage.prompt_tokens, 0 when the server sent none.
	PromptTokens int
}

// Problem is an answer that failed a check; Reason is its bounded code.
type Problem struct {
	Reason, Text string
}

func (p *Problem) Error() string { return p.Text }

// Reasons of a failed answer.
const (
	ReasonNotJSON   = "embeddings_not_json"
	ReasonCount     = "embeddings_count"
	ReasonDimension = "embeddings_dimension"
	ReasonNotFinite = "embeddings_not_finite"
)

type answer struct {
	Data []struct {
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Usage *struct {
		PromptTokens int `json:"prompt_tokens"`
	} `json:"usage"`
}

// Read reads and checks an answer to a request of n inputs.
func Read(r io.Reader, n int) (Answer, error) {
	raw, err := io.ReadAll(io.LimitReader(r, maxBody+1))
	if err != nil {
		return Answer{}, fmt.Errorf("reading the answer: %w", err)
	}
	if len(raw) > maxBody {
		return Answer{}, &Problem{ReasonNotJSON, fmt.Sprintf("answer over %d MiB", maxBody>>20)}
	}
	var a answer
	if err := json.Unmarshal(raw, &a); err != nil {
		return Answer{}, &Problem{ReasonNotJSON, "answer is not JSON of the embeddings shape: " + err.Error()}
	}
	if len(a.Data) != n {
		return Answer{}, &Problem{ReasonCount, fmt.Sprintf("%d of %d vectors", len(a.Data), n)}
	}
	out := Answer{Vectors: n}
	if a.Usage != nil {
		out.PromptTokens = max(a.Usage.PromptTokens, 0)
	}
	for i, d := range a.Data {
		v, err := vector(d.Embedding, i)
		if err != nil {
			return Answer{}, err
		}
		switch {
		case len(v) == 0:
			return Answer{}, &Problem{ReasonDimension, fmt.Sprintf("data[%d].embedding is empty", i)}
		case i == 0:
			out.Dimension = len(v)
		case len(v) != out.Dimension:
			return Answer{}, &Problem{ReasonDimension, fmt.Sprintf("dimensions %d and %d (data[0] and data[%d])", out.Dimension, len(v), i)}
		}
	}
	return out, nil
}

// vector decodes data[i].embedding: an array of numbers, or base64 of
// little-endian float32s (encoding_format: base64).
func vector(raw json.RawMessage, i int) ([]float64, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return fromBase64(s, i)
	}
	var v []float64
	// null decodes to 0 without an error: look for it before believing v.
	if err := json.Unmarshal(raw, &v); err == nil && !bytes.Contains(raw, []byte("null")) {
		return v, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, &Problem{ReasonNotJSON, fmt.Sprintf("data[%d].embedding is no array of numbers", i)}
	}
	for j, item := range items {
		var f float64
		if err := json.Unmarshal(item, &f); err != nil || string(item) == "null" {
			return nil, &Problem{ReasonNotFinite, fmt.Sprintf("%s at data[%d].embedding[%d]", excerpt(item), i, j)}
		}
	}
	return nil, &Problem{ReasonNotJSON, fmt.Sprintf("data[%d].embedding is no array of numbers", i)}
}

func fromBase64(s string, i int) ([]float64, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b)%4 != 0 {
		return nil, &Problem{ReasonNotJSON, fmt.Sprintf("data[%d].embedding is a string but no base64 of float32s", i)}
	}
	v := make([]float64, len(b)/4)
	for j := range v {
		f := math.Float32frombits(binary.LittleEndian.Uint32(b[4*j:]))
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return nil, &Problem{ReasonNotFinite, fmt.Sprintf("%g at data[%d].embedding[%d]", f, i, j)}
		}
		v[j] = float64(f)
	}
	return v, nil
}

// excerpt is a JSON value as the reason quotes it, at most 32 bytes.
func excerpt(item json.RawMessage) string {
	s := strings.TrimSpace(string(item))
	if len(s) > 32 {
		s = s[:32] + "…"
	}
	return s
}
