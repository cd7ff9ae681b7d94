package prober

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober/embeddings"
	"github.com/llmprobe/llmprobe/prober/openai"
	"github.com/llmprobe/llmprobe/prober/transport"
)

// payload is r's body as the target's API asks for it, opened afresh for
// each send, and its size.
func (c *Client) payload(model string, r Request) (func() io.Reader, int64, error) {
	if c.target.API != config.APIEmbeddings {
		body, err := openai.NewBody(c.wireRequest(model, r))
		if err != nil {
			return nil, 0, err
		}
		return body.Open, body.Size(), nil
	}
	inputs := embeddings.Inputs(r.Prompt.Text, r.Prompt.Tail, r.Scenario.InputCount())
	b, err := embeddings.Body(model, inputs, c.target.ExtraBody)
	if err != nil {
		return nil, 0, err
	}
	return func() io.Reader { return bytes.NewReader(b) }, int64(len(b)), nil
}

// readEmbeddings reads and checks an embeddings answer: end to end is its
// one latency; it has no output token, so TTFT, ITL and TPOT stay unset.
func (c *Client) readEmbeddings(ctx context.Context, body io.Reader, r Request, res *Result) {
	n := r.Scenario.InputCount()
	a, err := embeddings.Read(body, n)
	res.E2E = time.Since(r.Sched)
	var p *embeddings.Problem
	switch {
	case errors.As(err, &p):
		res.fail(OutcomeStreamError, phaseStream, p.Reason, p.Text)
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.fail(OutcomeTimeout, phaseStream, transport.ReasonDeadline, fmt.Sprintf("deadline after %s: %v", res.E2E.Round(time.Millisecond), err))
	case err != nil && ctx.Err() != nil:
		res.fail(OutcomeCancelled, phaseStream, transport.ReasonCancelled, err.Error())
	case err != nil:
		res.fail(OutcomeStreamError, phaseStream, reasonStreamCut, err.Error())
	default:
		res.Outcome = OutcomeSuccess
		res.Inputs, res.Dimension = a.Vectors, a.Dimension
		res.PromptTokensReported = a.PromptTokens
	}
}

// embeddingReasons are the reasons of an embeddings answer that failed its checks.
var embeddingReasons = []string{embeddings.ReasonNotJSON, embeddings.ReasonCount, embeddings.ReasonDimension, embeddings.ReasonNotFinite}
