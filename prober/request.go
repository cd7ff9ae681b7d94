package prober

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober/transport"
	"github.com/llmprobe/llmprobe/prompt"
)

// Request is one request to measure.
type Request struct {
	Scenario config.Scenario
	Traffic  string
	Prompt   prompt.Prompt
	// MaxTokens is the max_tokens to ask for.
	MaxTokens int
	// Sched is when the request was due; every latency counts from it.
	Sched time.Time
	// Released, when set, is when a burst's dispatcher let the request go;
	// the time from there to sending is concurrency-cap waiting, not prober lateness.
	Released time.Time
}

// Limits on what one response may make the prober hold.
const (
	maxLineBytes   = 1 << 20
	maxAnswerBytes = 64 << 10 // kept for quality checks
	answerPreview  = 256      // kept otherwise, for the landing page
	maxDrain       = 4 << 10  // read past [DONE], so the connection can be reused
	maxErrorText   = 512
	answerMargin   = 1 << 10 // longer than any secret worth masking
)

// Do sends one streaming request and measures it. It never panics on bad
// input and always returns a classified, evaluated result whose text is
// scrubbed of the target's secrets.
func (c *Client) Do(ctx context.Context, r Request) *Result {
	res := c.do(ctx, r)
	Evaluate(res, r.Scenario, r.Prompt)
	if q := res.Quality; q != nil && !q.Passed {
		res.Note("answer check failed: %s", q.Reason)
	}
	switch {
	case res.Outcome == OutcomeSuccess && res.Unstreamed:
		res.Note("done: outcome=%s e2e=%s tokens=%d (%s), unstreamed (TTFT, ITL, TPOT: n/a) good=%v", res.Outcome, res.E2E.Round(time.Microsecond), res.OutputTokens, res.TokenSource, res.Good)
	case res.Outcome == OutcomeSuccess && res.Inputs > 0:
		res.Note("done: outcome=%s e2e=%s %d inputs, %d prompt tokens in usage (TTFT, ITL, TPOT: n/a) good=%v", res.Outcome, res.E2E.Round(time.Microsecond), res.Inputs, res.PromptTokensReported, res.Good)
	case res.Outcome == OutcomeSuccess:
		res.Note("done: outcome=%s ttft=%s e2e=%s tokens=%d (%s) good=%v", res.Outcome, res.TTFT.Round(time.Microsecond), res.E2E.Round(time.Microsecond), res.OutputTokens, res.TokenSource, res.Good)
	case res.FirstTokenSeen():
		res.Note("done: outcome=%s after %s, ttft=%s, %d output chunks in", res.Outcome, res.E2E.Round(time.Microsecond), res.TTFT.Round(time.Microsecond), res.OutputChunks)
	default:
		// No token: a TTFT or token count would read as a measured 0.
		res.Note("done: outcome=%s after %s, no output token", res.Outcome, res.E2E.Round(time.Microsecond))
	}
	c.scrub(res)
	return res
}

func (c *Client) do(ctx context.Context, r Request) *Result {
	res := &Result{
		Target:                c.target.Name,
		Scenario:              r.Scenario.Name,
		Traffic:               r.Traffic,
		Sched:                 r.Sched,
		PromptTokensRequested: r.Prompt.RequestedTokens,
		Turn:                  r.Prompt.Turn,
		Unstreamed:            c.api.traits().tokens && !r.Scenario.Streamed(),
	}
	// The deadline counts from t_sched, like every latency.
	ctx, cancel := context.WithDeadline(ctx, r.Sched.Add(c.target.Timeout.Std()))
	handedOff := false // the body, and so the context, outlive do
	defer func() {
		if !handedOff {
			cancel()
		}
	}()

	discovery := transport.NewTracer(r.Sched)
	// A LoRA adapter is a model name of its own: no discovery needed.
	model, err := r.Prompt.Model, error(nil)
	if model == "" {
		model, err = c.resolveModel(discovery.Context(ctx))
	}
	res.Model = model
	if err != nil {
		res.E2E = time.Since(r.Sched)
		// How far the connection got; the first byte was /v1/models', not a response to the request.
		t := discovery.Timings()
		res.Timings = transport.Timings{DNS: t.DNS, Connect: t.Connect, TLS: t.TLS, ConnReused: t.ConnReused, OtherDial: t.OtherDial}
		res.failDiscovery(ctx, err)
		return res
	}
	p, err := c.api.body(model, r, c.target.ExtraBody, c.dialect())
	if err != nil {
		res.fail(OutcomeConnectionError, transport.PhaseRequest, transport.ReasonOther, err.Error())
		return res
	}
	res.PromptTokensRequested, res.AudioSeconds = p.promptTokens, p.audioSeconds
	tr := transport.NewTracer(r.Sched)
	req, err := c.newRequest(tr.Context(ctx), p, r, res)
	if err != nil {
		res.fail(OutcomeConnectionError, transport.PhaseRequest, transport.ReasonOther, err.Error())
		return res
	}

	sent := time.Now()
	res.DispatchDelay = max(sent.Sub(r.Sched), 0)
	if !r.Released.IsZero() {
		res.queued = true
		res.DispatchDelay = max(r.Released.Sub(r.Sched), 0)
		res.QueueWait = max(sent.Sub(r.Released), 0)
	}
	res.Note("POST %s model=%s %s (dispatch delay %s)", c.endpoint(), model, p.asks, res.DispatchDelay.Round(time.Microsecond))
	if r.Prompt.Turn > 0 {
		res.Note("conversation turn %d: %d earlier messages, then the new user message", r.Prompt.Turn, len(r.Prompt.History))
	}
	resp, err := tr.Send(c.http, req)
	res.Timings = tr.Timings()
	if res.Timings.Retry != "" {
		res.Note("sent again: the reused connection closed before any response byte (%s)", res.Timings.Retry)
	}
	if err != nil {
		res.E2E = time.Since(r.Sched)
		phase, reason := tr.Failed(ctx, err)
		res.fail(outcomeOfTransport(reason), phase, reason, transport.Describe(err))
		return res
	}
	if c.readAnswer(ctx, resp, r, res) {
		handedOff = true
		release(resp.Body, cancel)
	} else {
		_ = resp.Body.Close()
	}
	return res
}

// newRequest is the POST of payload p for r, with its headers and the ids
// res then carries.
func (c *Client) newRequest(ctx context.Context, p payload, r Request, res *Result) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint(), p.open())
	if err != nil {
		return nil, err
	}
	// Known length, not chunked; GetBody lets the transport send it again.
	req.ContentLength = p.size
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(p.open()), nil }
	c.setHeaders(req)
	if a, ok := c.api.(headerAPI); ok {
		for name, value := range a.headers() {
			if !c.configuresHeader(name) {
				req.Header.Set(name, value)
			}
		}
	}
	var sample func(string) bool
	if c.sampler != nil {
		sample = c.sampler.Sampled
	}
	res.RequestID, res.TraceParent = transport.NewRequestID(sample)
	req.Header.Set("X-Request-Id", res.RequestID)
	req.Header.Set("Traceparent", res.TraceParent)
	req.Header.Set("Content-Type", cmp.Or(p.contentType, "application/json"))
	req.Header.Set("Accept", "application/json")
	if c.streams(r) {
		req.Header.Set("Accept", "text/event-stream")
	}
	return req, nil
}

// readAnswer reads the response to r: a failed status, a body that is no
// event stream, or the stream. complete says the answer reached its end
// (the final event, the end of its JSON value): what follows is the
// connection's, not the answer's.
func (c *Client) readAnswer(ctx context.Context, resp *http.Response, r Request, res *Result) (complete bool) {
	res.HTTPStatus = resp.StatusCode
	res.Timings.CertExpiry = transport.CertExpiry(resp.TLS)
	res.Note("HTTP %d %s (connection %s, first byte after %s)", resp.StatusCode, resp.Header.Get("Content-Type"), connectionWord(res.Timings), res.Timings.TTFB.Round(time.Microsecond))
	if rp := c.target.Replicas; rp != nil {
		v := resp.Header.Get(rp.Header)
		if res.Replica = rp.Of(v); v != "" {
			res.Note("answered by replica %s (%s: %s)", res.Replica, rp.Header, truncate(v, 128))
		}
	}
	body, encoding, encodingErr := transport.Decoded(resp)
	switch {
	case encodingErr != nil:
		body = resp.Body // an error answer's excerpt, as it came
	case encoding != "":
		res.Note("body compressed with Content-Encoding %s, which llmprobe did not ask for: decoded as it arrives", encoding)
	}
	if resp.StatusCode != http.StatusOK {
		res.E2E = time.Since(r.Sched)
		msg, excerpt := readError(body, resp.Body, c.redact)
		res.Body = excerpt
		text := fmt.Sprintf("HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			text += ", Retry-After " + truncate(ra, 32)
		}
		if msg != "" {
			text += ": " + msg
		}
		res.fail(outcomeOfStatus(resp.StatusCode), transport.PhaseHeaders, reasonHTTPStatus, text)
		return false
	}
	if encodingErr != nil {
		res.E2E = time.Since(r.Sched)
		res.fail(OutcomeStreamError, transport.PhaseHeaders, reasonContentEncoding, encodingErr.Error())
		return false
	}
	ct := resp.Header.Get("Content-Type")
	if !c.streams(r) {
		if c.api.traits().tokens && isEventStream(ct) {
			res.E2E = time.Since(r.Sched)
			res.fail(OutcomeStreamError, transport.PhaseHeaders, reasonUnaskedStream, "an event stream came for a request with stream: false")
			return false
		}
		return c.readWhole(ctx, body, resp.Header, r, res)
	}
	if !isEventStream(ct) {
		res.E2E = time.Since(r.Sched)
		msg, excerpt := readError(body, resp.Body, c.redact)
		res.Body = excerpt
		text := fmt.Sprintf("Content-Type %q is not text/event-stream: %s", ct, cmp.Or(msg, "an empty body"))
		if h, ok := c.api.(oneBodyHint); ok && !isEventStream(ct) && strings.Contains(ct, "json") {
			text += "; " + h.oneBodyHint()
		}
		res.fail(OutcomeStreamError, transport.PhaseHeaders, reasonNotEventStream, text)
		return false
	}
	return c.readStream(ctx, body, r, res)
}

// isEventStream reports whether Content-Type ct names an event stream.
// Media types and their parameters' names are case-insensitive (RFC 9110
// §8.3.1), and a charset, whatever it says, is no reason to refuse one.
func isEventStream(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil { // a malformed parameter: the type before it still counts
		mt, _, _ = strings.Cut(ct, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
	}
	return mt == "text/event-stream"
}

// streams reports whether r's answer comes as an event stream: an answer
// of tokens, unless its scenario says stream: false.
func (c *Client) streams(r Request) bool {
	return c.api.traits().tokens && r.Scenario.Streamed()
}

// connectionWord says what the connection of a request was: reused (it had
// carried a response), new, or new but dialled for an earlier request
// (one that gave up on it).
func connectionWord(t transport.Timings) string {
	switch {
	case t.ConnReused:
		return "reused"
	case t.OtherDial:
		return "new, dialled for an earlier request"
	}
	return "new"
}
