// Package pooling is the wire format of the sim's embeddings and rerank
// endpoints: a request read into the work it costs and the answer it gets.
package pooling

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"sort"
	"strings"
)

// Dimension is the length of every vector the sim answers.
const Dimension = 384

// Job is one read request: the model it asks for, the prompt tokens its
// texts cost (whitespace-separated words), and its answer.
type Job struct {
	Model  string
	Tokens int
	Answer func(model string) any
	// Header is set on the answer: TEI counts its tokens there.
	Header map[string]string
}

// AnyModel is the Model of a request that names none, which a server of
// one model (TEI) answers.
const AnyModel = "\x00any"

// Embeddings reads a /v1/embeddings request: input is a string or a list
// of strings, each embedded as a vector seeded by its text.
func Embeddings(body io.Reader) (Job, error) {
	var req struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	if err := json.NewDecoder(body).Decode(&req); err != nil {
		return Job{}, fmt.Errorf("invalid JSON body: %w", err)
	}
	var texts []string
	var one string
	if json.Unmarshal(req.Input, &one) == nil {
		texts = []string{one}
	} else if json.Unmarshal(req.Input, &texts) != nil || len(texts) == 0 {
		return Job{}, errors.New("input must be a string or a non-empty list of strings")
	}
	job := Job{Model: req.Model, Tokens: words(texts...)}
	job.Answer = func(model string) any {
		data := make([]map[string]any, len(texts))
		for i, t := range texts {
			data[i] = map[string]any{"object": "embedding", "index": i, "embedding": vector(t)}
		}
		return map[string]any{"object": "list", "model": model, "data": data, "usage": usage(job.Tokens)}
	}
	return job, nil
}

// Rerank reads a /v1/rerank request (vLLM's, Jina's and Cohere's shape):
// each document's score is seeded by the query and its text, and results
// come sorted by score, as the engines send them.
func Rerank(body io.Reader) (Job, error) {
	var req struct {
		Model     string   `json:"model"`
		Query     string   `json:"query"`
		Documents []string `json:"documents"`
	}
	if err := json.NewDecoder(body).Decode(&req); err != nil {
		return Job{}, fmt.Errorf("invalid JSON body: %w", err)
	}
	if req.Query == "" || len(req.Documents) == 0 {
		return Job{}, errors.New("query and documents are required")
	}
	job := Job{Model: req.Model, Tokens: words(req.Query) + words(req.Documents...)}
	job.Answer = func(model string) any {
		var results []map[string]any
		for _, r := range ranked(req.Query, req.Documents) {
			results = append(results, map[string]any{"index": r.index, "relevance_score": r.score})
		}
		return map[string]any{"id": "rerank-sim", "model": model, "results": results, "usage": usage(job.Tokens)}
	}
	return job, nil
}

// RerankTEI reads a request to TEI's own /rerank ({query, texts}): its
// answer is a bare list of {index, score}, sorted by score, and the tokens
// it cost are in the x-compute-tokens header, as TEI sends them.
func RerankTEI(body io.Reader) (Job, error) {
	var req struct {
		Query string   `json:"query"`
		Texts []string `json:"texts"`
	}
	if err := json.NewDecoder(body).Decode(&req); err != nil {
		return Job{}, fmt.Errorf("invalid JSON body: %w", err)
	}
	if len(req.Texts) == 0 {
		return Job{}, errors.New("`texts` cannot be empty")
	}
	job := Job{Model: AnyModel, Tokens: words(req.Query) + words(req.Texts...)}
	job.Header = map[string]string{"X-Compute-Tokens": fmt.Sprint(job.Tokens)}
	job.Answer = func(string) any {
		var ranks []map[string]any
		for _, r := range ranked(req.Query, req.Texts) {
			ranks = append(ranks, map[string]any{"index": r.index, "score": r.score})
		}
		return ranks
	}
	return job, nil
}

type rank struct {
	index int
	score float64
}

// ranked is the documents' indices by relevance to the query, highest
// first, as the engines send them; each score is seeded by the query and
// the document's text, in [0, 1).
func ranked(query string, docs []string) []rank {
	out := make([]rank, len(docs))
	for i, d := range docs {
		out[i] = rank{i, float64(hash(query+"\x00"+d)>>11) / (1 << 53)}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].score > out[j].score })
	return out
}

func usage(tokens int) map[string]int {
	return map[string]int{"prompt_tokens": tokens, "total_tokens": tokens}
}

func words(texts ...string) int {
	n := 0
	for _, t := range texts {
		n += len(strings.Fields(t))
	}
	return n
}

func hash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// vector is text's embedding: deterministic, values in [-1, 1).
func vector(text string) []float32 {
	rng := rand.New(rand.NewPCG(hash(text), 0))
	v := make([]float32, Dimension)
	for i := range v {
		v[i] = float32(2*rng.Float64() - 1)
	}
	return v
}
