package sim

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"

	"github.com/llmprobe/llmprobe/sim/internal/pooling"
)

// EmbeddingDimension is the length of every vector the sim answers.
const EmbeddingDimension = pooling.Dimension

// servePooled answers an embeddings or rerank request, read by read: its
// texts cost prefill like a prompt's, in the same batches as generation,
// then one step stands for pooling.
func (e *Engine) servePooled(read func(io.Reader) (pooling.Job, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		job, err := read(io.LimitReader(r.Body, 16<<20))
		if err != nil {
			apiError(w, http.StatusBadRequest, "BadRequestError", err.Error())
			return
		}
		if job.Model != e.cfg.Model && job.Model != pooling.AnyModel {
			apiError(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("The model `%s` does not exist.", job.Model))
			return
		}
		n, faults := e.nextArrival()
		if drawPlan(rand.New(rand.NewPCG(uint64(e.cfg.Seed), n)), faults).fail {
			apiError(w, faults.ErrorStatus, "InternalServerError", "simulated failure")
			return
		}
		s := newSequence(r.Context(), job.Tokens, 1, false)
		if !e.enqueue(w, s) {
			return
		}
		if waitToken(r.Context(), s) {
			for k, v := range job.Header {
				w.Header().Set(k, v)
			}
			writeJSON(w, http.StatusOK, job.Answer(e.cfg.Model))
		}
	}
}
