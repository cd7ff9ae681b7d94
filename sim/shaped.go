package sim

import (
	"math/rand/v2"

	"github.com/llmprobe/llmprobe/sim/internal/persona"
	"github.com/llmprobe/llmprobe/sim/internal/request"
	"github.com/llmprobe/llmprobe/sim/internal/shaped"
)

// shapeSeed sets a shaped answer's generator apart from the request's own.
const shapeSeed = 0x5ba9ed

// shapeOf is the answer of function calls or JSON text that req asks for,
// or nil. Its draws come from a generator of their own, so they move no
// other draw of request n.
func (e *Engine) shapeOf(req *request.Generate, n uint64, fault string) (*shaped.Answer, error) {
	return shaped.Plan(shaped.Request{Tools: req.Tools, ToolChoice: req.ToolChoice, ResponseFormat: req.ResponseFormat, Text: req.Text},
		rand.New(rand.NewPCG(uint64(e.cfg.Seed)^shapeSeed, n)), fault, e.cfg.Engine == persona.LlamaCPP)
}

// finish is the finish_reason of an answer of sent tokens: a shaped
// answer's own when it was given whole, stop where a golden answer ended,
// else the length asked for.
func (st *streamWriter) finish(sent int) string {
	if st.shape != nil && sent == st.shape.Tokens() {
		return st.shape.Finish()
	}
	return st.seq.finishReason()
}
