package sim

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net/http"
	"time"
)

// EmbeddingDimension is the length of every vector the sim answers.
const EmbeddingDimension = 384

// serveEmbeddings answers /v1/embeddings: the inputs' words cost prefill
// like a prompt's, in the same batches as generation, and each input gets
// a vector seeded by its text, so the same text always embeds the same.
func (e *Engine) serveEmbeddings(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 16<<20)).Decode(&req); err != nil {
		apiError(w, http.StatusBadRequest, "BadRequestError", "invalid JSON body: "+err.Error())
		return
	}
	if req.Model != e.cfg.Model {
		apiError(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("The model `%s` does not exist.", req.Model))
		return
	}
	var texts []string
	eachText(req.Input, func(s string) { texts = append(texts, s) })
	if len(texts) == 0 {
		apiError(w, http.StatusBadRequest, "BadRequestError", "input must be a string or a list of strings")
		return
	}
	n, faults := e.nextArrival()
	if drawPlan(rand.New(rand.NewPCG(uint64(e.cfg.Seed), n)), faults).fail {
		apiError(w, faults.ErrorStatus, "InternalServerError", "simulated failure")
		return
	}
	s := &sequence{ctx: r.Context(), promptTokens: countWords(req.Input), maxTokens: 1, arrived: time.Now(), out: make(chan struct{}, 1)}
	if err := e.submit(s); err != nil {
		apiError(w, http.StatusTooManyRequests, "RateLimitError", "the simulated engine's queue is full")
		return
	}
	// The one step after prefill stands for pooling.
	if !waitToken(r.Context(), s) {
		return
	}
	data := make([]map[string]any, len(texts))
	for i, t := range texts {
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": embed(t)}
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "model": e.cfg.Model, "data": data,
		"usage": map[string]int{"prompt_tokens": s.promptTokens, "total_tokens": s.promptTokens}})
}

// embed is text's vector: deterministic, values in [-1, 1).
func embed(text string) []float32 {
	h := fnv.New64a()
	h.Write([]byte(text))
	rng := rand.New(rand.NewPCG(h.Sum64(), 0))
	v := make([]float32, EmbeddingDimension)
	for i := range v {
		v[i] = float32(2*rng.Float64() - 1)
	}
	return v
}
