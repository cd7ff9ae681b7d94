package prober

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/lib/sse"
)

// embeddings is the Embeddings API (/v1/embeddings): the prompt as
// numbered inputs; the answer, one body, holds a vector per input, every
// vector of one dimension and every number finite.
type embeddings struct{}

func (embeddings) path(dialect) string { return "/v1/embeddings" }

func (embeddings) traits() traits { return traits{} }

func (embeddings) body(model string, r Request, extra map[string]any, _ dialect) (payload, error) {
	n := r.Scenario.InputCount()
	fields := map[string]any{"model": model, "input": inputs(r.Prompt.Text+r.Prompt.Tail, n)}
	return pooledBody(config.APIEmbeddings, fields, extra, r, n, n*r.Prompt.RequestedTokens)
}

func (embeddings) event(sse.Event, *streamChunk) (bool, string, error) {
	return false, reasonMalformed, notStreamed(config.APIEmbeddings)
}

func (embeddings) whole(body io.Reader, _ http.Header, r Request, _ int, _ dialect) (*answer, error) {
	raw, err := readPooled(body)
	if err != nil {
		return nil, err
	}
	return readEmbeddings(raw, r.Scenario.InputCount())
}

// inputs are n texts made from one prompt, each numbered first so no two
// are the same and none repeats another request's (the prompt's nonce).
func inputs(text string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%d. %s", i+1, text)
	}
	return out
}

// Reasons of a failed embeddings answer.
const (
	reasonEmbeddingsNotJSON   = "embeddings_not_json"
	reasonEmbeddingsCount     = "embeddings_count"
	reasonEmbeddingsDimension = "embeddings_dimension"
	reasonEmbeddingsNotFinite = "embeddings_not_finite"
)

type embeddingsAnswer struct {
	Data []struct {
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Usage *pooledUsage `json:"usage"`
}

func readEmbeddings(raw []byte, n int) (*answer, error) {
	var a embeddingsAnswer
	if err := decode(raw, &a, reasonEmbeddingsNotJSON, config.APIEmbeddings); err != nil {
		return nil, err
	}
	if len(a.Data) != n {
		return nil, &answerProblem{reasonEmbeddingsCount, fmt.Sprintf("%d of %d vectors", len(a.Data), n)}
	}
	out := &answer{Inputs: n, InputTokens: a.Usage.tokens()}
	for i, d := range a.Data {
		v, err := vector(d.Embedding, i)
		if err != nil {
			return nil, err
		}
		switch {
		case len(v) == 0:
			return nil, &answerProblem{reasonEmbeddingsDimension, fmt.Sprintf("data[%d].embedding is empty", i)}
		case i == 0:
			out.Dimension = len(v)
		case len(v) != out.Dimension:
			return nil, &answerProblem{reasonEmbeddingsDimension, fmt.Sprintf("dimensions %d and %d (data[0] and data[%d])", out.Dimension, len(v), i)}
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
		return nil, &answerProblem{reasonEmbeddingsNotJSON, fmt.Sprintf("data[%d].embedding is no array of numbers", i)}
	}
	for j, item := range items {
		var f float64
		if err := json.Unmarshal(item, &f); err != nil || string(item) == "null" {
			return nil, &answerProblem{reasonEmbeddingsNotFinite, fmt.Sprintf("%s at data[%d].embedding[%d]", excerpt(item), i, j)}
		}
	}
	return nil, &answerProblem{reasonEmbeddingsNotJSON, fmt.Sprintf("data[%d].embedding is no array of numbers", i)}
}

func fromBase64(s string, i int) ([]float64, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b)%4 != 0 {
		return nil, &answerProblem{reasonEmbeddingsNotJSON, fmt.Sprintf("data[%d].embedding is a string but no base64 of float32s", i)}
	}
	v := make([]float64, len(b)/4)
	for j := range v {
		f := math.Float32frombits(binary.LittleEndian.Uint32(b[4*j:]))
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return nil, &answerProblem{reasonEmbeddingsNotFinite, fmt.Sprintf("%g at data[%d].embedding[%d]", f, i, j)}
		}
		v[j] = float64(f)
	}
	return v, nil
}
