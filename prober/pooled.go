package prober

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/llmprobe/llmprobe/prober/transport"
)

// payload is r's body as the target's API asks for it, opened afresh for
// each send, and its size.
func (c *Client) payload(model string, r Request) (func() io.Reader, int64, error) {
	if !IsPooled(c.target.API) {
		body, err := NewBody(c.wireRequest(model, r))
		if err != nil {
			return nil, 0, err
		}
		return body.Open, body.Size(), nil
	}
	b, err := c.pooled().Body(model, r.Prompt.Text+r.Prompt.Tail, r.Scenario, c.target.ExtraBody)
	if err != nil {
		return nil, 0, err
	}
	return func() io.Reader { return bytes.NewReader(b) }, int64(len(b)), nil
}

// readPooled reads and checks an embeddings or rerank answer: end to end
// is its one latency; it has no output token, so TTFT, ITL and TPOT stay
// unset.
func (c *Client) readPooled(ctx context.Context, body io.Reader, header http.Header, r Request, res *Result) {
	a, err := c.pooled().Read(body, header, PooledInputs(c.target.API, r.Scenario))
	res.E2E = time.Since(r.Sched)
	if res.failAnswer(ctx, err) {
		return
	}
	if a.Dimension > 0 {
		res.logf("%d vectors of %d dimensions", a.Count, a.Dimension)
	} else {
		res.logf("%d documents ranked", a.Count)
	}
	res.Outcome = OutcomeSuccess
	res.Inputs, res.Dimension, res.PromptTokensReported = a.Count, a.Dimension, a.Tokens
}

// failAnswer fails res for err, an answer read in one body that failed its
// checks (a *pooling.Problem with its reason) or its reading; it reports
// whether there was an error.
func (res *Result) failAnswer(ctx context.Context, err error) bool {
	var p *AnswerProblem
	switch {
	case err == nil:
		return false
	case errors.As(err, &p):
		res.fail(OutcomeStreamError, phaseStream, p.Reason, p.Text)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.fail(OutcomeTimeout, phaseStream, transport.ReasonDeadline, fmt.Sprintf("deadline after %s: %v", res.E2E.Round(time.Millisecond), err))
	case ctx.Err() != nil:
		res.fail(OutcomeCancelled, phaseStream, transport.ReasonCancelled, err.Error())
	default:
		res.fail(OutcomeStreamError, phaseStream, reasonStreamCut, err.Error())
	}
	return true
}
