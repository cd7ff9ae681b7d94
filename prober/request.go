package prober

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/sse"
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
	maxErrorBody   = 4 << 10  // read of a failed response, for its message
	maxBodyExcerpt = 512      // of which a failure keeps this much
	maxErrorText   = 512
	answerMargin   = 1 << 10 // longer than any secret worth masking
)

// Do sends one streaming request and measures it. It never panics on bad
// input and always returns a classified, evaluated result whose text is
// scrubbed of the target's secrets.
func (c *Client) Do(ctx context.Context, r Request) *Result {
	res := c.do(ctx, r)
	Evaluate(res, r.Scenario)
	switch {
	case res.Outcome == OutcomeSuccess:
		res.logf("done: outcome=%s ttft=%s e2e=%s tokens=%d (%s) good=%v", res.Outcome, res.TTFT.Round(time.Microsecond), res.E2E.Round(time.Microsecond), res.OutputTokens, res.TokenSource, res.Good)
	case res.FirstTokenSeen():
		res.logf("done: outcome=%s after %s, ttft=%s, %d output chunks in", res.Outcome, res.E2E.Round(time.Microsecond), res.TTFT.Round(time.Microsecond), res.OutputChunks)
	default:
		// No token: a TTFT or token count would read as a measured 0.
		res.logf("done: outcome=%s after %s, no output token", res.Outcome, res.E2E.Round(time.Microsecond))
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
	}
	// The deadline counts from t_sched, like every latency.
	ctx, cancel := context.WithDeadline(ctx, r.Sched.Add(c.target.Timeout.Std()))
	defer cancel()

	discovery := &tracer{sched: r.Sched}
	model, err := c.resolveModel(httptrace.WithClientTrace(ctx, discovery.trace()))
	res.Model = model
	if err != nil {
		res.E2E = time.Since(r.Sched)
		// How far the connection got; the first byte was /v1/models', not a response to the request.
		t := discovery.timings()
		res.Timings = Timings{DNS: t.DNS, Connect: t.Connect, TLS: t.TLS, ConnReused: t.ConnReused}
		res.failDiscovery(ctx, err)
		return res
	}
	body, err := c.requestBody(model, r)
	if err != nil {
		res.fail(OutcomeConnectionError, phaseRequest, reasonOther, err.Error())
		return res
	}
	tr := &tracer{sched: r.Sched}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, tr.trace()), http.MethodPost, c.endpoint(), body.open())
	if err != nil {
		res.fail(OutcomeConnectionError, phaseRequest, reasonOther, err.Error())
		return res
	}
	// Known length, not chunked; GetBody lets the transport send it again.
	req.ContentLength = body.size()
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(body.open()), nil }
	c.setHeaders(req)
	res.RequestID = newRequestID()
	res.TraceParent = traceParent(res.RequestID)
	req.Header.Set("X-Request-Id", res.RequestID)
	req.Header.Set("Traceparent", res.TraceParent)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")

	sent := time.Now()
	res.DispatchDelay = max(sent.Sub(r.Sched), 0)
	if !r.Released.IsZero() {
		res.queued = true
		res.DispatchDelay = max(r.Released.Sub(r.Sched), 0)
		res.QueueWait = max(sent.Sub(r.Released), 0)
	}
	res.logf("POST %s model=%s prompt_tokens~%d max_tokens=%d (dispatch delay %s)", c.endpoint(), model, r.Prompt.RequestedTokens, r.MaxTokens, res.DispatchDelay.Round(time.Microsecond))
	if r.Prompt.Turn > 0 {
		res.logf("conversation turn %d: %d earlier messages, then the new user message", r.Prompt.Turn, len(r.Prompt.History))
	}
	resp, err := c.http.Do(req)
	res.Timings = tr.timings()
	if err != nil {
		res.E2E = time.Since(r.Sched)
		outcome, reason := classify(ctx, err)
		res.fail(outcome, phaseOf(reason, tr.phase()), reason, err.Error())
		return res
	}
	defer resp.Body.Close()
	res.HTTPStatus = resp.StatusCode
	res.Timings.CertExpiry = certExpiry(resp.TLS)
	res.logf("HTTP %d %s (connection %s, first byte after %s)", resp.StatusCode, resp.Header.Get("Content-Type"), reusedWord(res.Timings.ConnReused), res.Timings.TTFB.Round(time.Microsecond))
	if resp.StatusCode != http.StatusOK {
		res.E2E = time.Since(r.Sched)
		msg, excerpt := c.readErrorBody(resp.Body)
		res.Body = excerpt
		text := fmt.Sprintf("HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			text += ", Retry-After " + truncate(ra, 32)
		}
		if msg != "" {
			text += ": " + msg
		}
		res.fail(outcomeOfStatus(resp.StatusCode), phaseHeaders, reasonHTTPStatus, text)
		return res
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		res.E2E = time.Since(r.Sched)
		msg, excerpt := c.readErrorBody(resp.Body)
		res.Body = excerpt
		res.fail(OutcomeStreamError, phaseHeaders, reasonNotEventStream, fmt.Sprintf("Content-Type %q is not text/event-stream: %s", ct, msg))
		return res
	}
	c.readStream(ctx, resp.Body, r, res)
	return res
}

// newRequestID is 128 random bits in hex, the shape of a W3C trace id: unique
// across replicas and restarts without coordination.
func newRequestID() string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], rand.Uint64())
	binary.BigEndian.PutUint64(b[8:], rand.Uint64())
	return hex.EncodeToString(b[:])
}

// traceParent is a W3C traceparent (version 00, sampled) whose trace id is
// the request id and whose parent span id is fresh, never all zero.
func traceParent(requestID string) string {
	span := rand.Uint64() | 1
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], span)
	return "00-" + requestID + "-" + hex.EncodeToString(b[:]) + "-01"
}

// phaseOf puts errors whose kind names their phase there, whatever the
// trace saw last.
func phaseOf(reason, traced string) string {
	switch reason {
	case reasonDNS:
		return phaseDNS
	case reasonRefused:
		return phaseConnect
	case reasonTLS:
		return phaseTLS
	case reasonRedirect:
		return phaseHeaders
	}
	return traced
}

// outcomeOfStatus sorts a non-200 answer: 429 and 503 are overload
// (rejected), which must never look fast; anything else an HTTP error.
func outcomeOfStatus(status int) Outcome {
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		return OutcomeRejected
	}
	return OutcomeHTTPError
}

func reusedWord(reused bool) string {
	if reused {
		return "reused"
	}
	return "new"
}

// failDiscovery classifies a failure to find the model: the HTTP status of
// /v1/models when it answered, the transport error when it did not.
func (res *Result) failDiscovery(ctx context.Context, err error) {
	var se *statusError
	if errors.As(err, &se) {
		res.HTTPStatus = se.status
		res.Body = se.excerpt
		res.fail(outcomeOfStatus(se.status), phaseDiscovery, reasonHTTPStatus, err.Error())
		return
	}
	outcome, reason := classify(ctx, err)
	if outcome == OutcomeConnectionError && reason == reasonOther && errors.Is(err, errNoModel) {
		outcome = OutcomeHTTPError
	}
	res.fail(outcome, phaseDiscovery, reason, err.Error())
}

func (res *Result) fail(o Outcome, phase, reason, msg string) {
	res.Outcome, res.Phase, res.Reason = o, phase, reason
	res.Error = truncate(msg, maxErrorText)
	res.logf("%s in %s (%s): %s", o, phase, reason, res.Error)
}

func (r *Result) logf(format string, args ...any) {
	r.Log = append(r.Log, fmt.Sprintf("%7.1fms ", float64(time.Since(r.Sched).Microseconds())/1000)+fmt.Sprintf(format, args...))
}

// requestFields is the request's JSON object, with content as the prompt.
func (c *Client) requestFields(model string, r Request, content string) map[string]any {
	body := make(map[string]any, 8+len(c.target.ExtraBody))
	maps.Copy(body, c.target.ExtraBody)
	body["model"] = model
	body["stream"] = true
	body["max_tokens"] = r.MaxTokens
	// include_usage gives exact token counts; extra_body may add engine options
	// such as vLLM's continuous_usage_stats.
	streamOptions := map[string]any{}
	if extra, ok := c.target.ExtraBody["stream_options"].(map[string]any); ok {
		maps.Copy(streamOptions, extra)
	}
	streamOptions["include_usage"] = true
	body["stream_options"] = streamOptions
	if c.target.API == config.APICompletions {
		body["prompt"] = completionsPrompt(r.Prompt.History, content)
	} else {
		messages := make([]map[string]string, 0, len(r.Prompt.History)+1)
		for _, m := range r.Prompt.History {
			messages = append(messages, map[string]string{"role": m.Role, "content": m.Content})
		}
		body["messages"] = append(messages, map[string]string{"role": "user", "content": content})
	}
	s := r.Scenario.Sampling
	if s.Temperature != nil {
		body["temperature"] = *s.Temperature
	}
	if s.TopP != nil {
		body["top_p"] = *s.TopP
	}
	if s.Seed != nil {
		body["seed"] = *s.Seed
	}
	return body
}

// promptSentinel stands for the prompt when the request is marshalled; the
// body is then sent as the bytes around it with the prompt written between.
const promptSentinel = "\x00llmprobe:prompt\x00"

// requestBody is a request's JSON body in pieces: the marshalled request up
// to the prompt's opening quote, the prompt's Text and Tail, and the rest.
// A long prompt's Tail is the builder's shared body, sent from where it is:
// the request holds no copy of it.
type requestBody struct {
	head, closing []byte
	text, tail    jsonString
}

func (c *Client) requestBody(model string, r Request) (*requestBody, error) {
	out, err := json.Marshal(c.requestFields(model, r, promptSentinel))
	if err != nil {
		return nil, err
	}
	quoted, _ := json.Marshal(promptSentinel)
	if i := bytes.Index(out, quoted); i >= 0 && bytes.Count(out, quoted) == 1 {
		b := &requestBody{
			head:    out[:i+1],
			closing: out[i+len(quoted)-1:],
			text:    escapeJSON(r.Prompt.Text),
			tail:    escapeJSON(r.Prompt.Tail),
		}
		return b.inline(), nil
	}
	// extra_body holds the sentinel too: marshalled whole, a copy.
	out, err = json.Marshal(c.requestFields(model, r, r.Prompt.Text+r.Prompt.Tail))
	return &requestBody{head: out}, err
}

// inline makes a short body one buffer again: net/http writes a body it
// knows is in memory together with the headers, one write as a short
// request always was, but flushes the headers first for any other reader.
func (b *requestBody) inline() *requestBody {
	if b.size() > config.MaxInlineBody {
		return b
	}
	flat := make([]byte, 0, b.size())
	flat = append(flat, b.head...)
	flat = b.text.appendTo(flat)
	flat = b.tail.appendTo(flat)
	return &requestBody{head: append(flat, b.closing...)}
}

// size is the body's length in bytes, its Content-Length.
func (b *requestBody) size() int64 {
	return int64(len(b.head) + b.text.size() + b.tail.size() + len(b.closing))
}

// open reads the body from its start; each call reads it again (GetBody).
func (b *requestBody) open() io.Reader {
	if b.text.size()+b.tail.size()+len(b.closing) == 0 {
		return bytes.NewReader(b.head) // inline: sent with the headers
	}
	return readOnly{io.MultiReader(bytes.NewReader(b.head), b.text.reader(), b.tail.reader(), bytes.NewReader(b.closing))}
}

// readOnly hides a MultiReader's WriteTo, which makes a 32 KiB buffer per
// call: net/http calls it once more after Content-Length bytes, to see
// that nothing is left.
type readOnly struct{ io.Reader }

// jsonString is a string as it is written inside a JSON string: itself when
// nothing in it needs escaping (synthetic words never do), else escaped.
type jsonString struct {
	plain   string
	escaped []byte
}

// escapeJSON escapes s as json.Marshal does, and copies it only when some
// byte needs escaping: a control character, a quote or backslash, one of
// the <>& that json.Marshal escapes for HTML, or any non-ASCII byte (invalid
// UTF-8, U+2028 and U+2029 are escaped too; the rest is left to
// json.Marshal). Text and Tail split between words, so escaping each alone
// writes what escaping them together would.
func escapeJSON(s string) jsonString {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return jsonString{escaped: q[1 : len(q)-1]}
		}
	}
	return jsonString{plain: s}
}

func (j jsonString) size() int {
	if j.escaped != nil {
		return len(j.escaped)
	}
	return len(j.plain)
}

func (j jsonString) appendTo(b []byte) []byte {
	if j.escaped != nil {
		return append(b, j.escaped...)
	}
	return append(b, j.plain...)
}

func (j jsonString) reader() io.Reader {
	if j.escaped != nil {
		return bytes.NewReader(j.escaped)
	}
	return strings.NewReader(j.plain)
}

// completionsPrompt is a conversation as one text for the completions API:
// its earlier messages in order, a blank line apart, then the new one, so
// every turn's prompt starts with the one before it and the prefix cache can
// serve it.
func completionsPrompt(history []prompt.Message, content string) string {
	if len(history) == 0 {
		return content
	}
	var sb strings.Builder
	for _, m := range history {
		sb.WriteString(m.Content)
		sb.WriteString("\n\n")
	}
	sb.WriteString(content)
	return sb.String()
}

// streamChunk is the part of a completions or chat chunk the prober reads.
type streamChunk struct {
	Choices []struct {
		Text  string `json:"text"`
		Delta struct {
			Content          string            `json:"content"`
			ReasoningContent string            `json:"reasoning_content"`
			Reasoning        string            `json:"reasoning"`
			ToolCalls        []json.RawMessage `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usage          `json:"usage"`
	Error json.RawMessage `json:"error"`
	// The engine's own timings of the request: vLLM's `metrics` (with
	// --enable-per-request-metrics and include_metrics), llama.cpp's
	// `timings`. Raw, so a garbage value is ignored, never fatal.
	Metrics json.RawMessage `json:"metrics"`
	Timings json.RawMessage `json:"timings"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// Reasoning tokens among the completion tokens: OpenAI's shape, and
	// SGLang's top-level field (0 there when the model did not reason).
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	ReasoningTokens int `json:"reasoning_tokens"`
	// Prompt tokens the engine's prefix cache served (vLLM with
	// --enable-prompt-tokens-details, SGLang, OpenAI); nil when not reported.
	PromptTokensDetails *struct {
		CachedTokens *int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// reasoning is the reasoning token count the usage reports, 0 for none.
func (u usage) reasoning() int {
	if d := u.CompletionTokensDetails; d != nil && d.ReasoningTokens > 0 {
		return d.ReasoningTokens
	}
	return max(u.ReasoningTokens, 0)
}

// streamState is what readStream tracks between chunks.
type streamState struct {
	chunkAt     []time.Duration // arrival of each output chunk, from t_sched
	chunkTokens []int           // tokens per output chunk from running usage, when the engine sends it
	exactCounts bool
	lastUsage   usage
	answer      strings.Builder
	answerLimit int
	maxChunks   int
	done        bool
	engineBad   bool // an engine timings object was garbage (logged once)
	// Output chunks by kind; a chunk with both kinds counts in both.
	reasoningChunks, answerChunks int
}

func (c *Client) readStream(ctx context.Context, body io.Reader, r Request, res *Result) {
	st := &streamState{exactCounts: true, answerLimit: answerPreview, maxChunks: maxOutputChunks(r.MaxTokens)}
	if r.Scenario.Quality != nil || r.Prompt.Turn > 0 {
		st.answerLimit = maxAnswerBytes // checked, or sent back in the next turn
	}
	events := sse.NewReader(body, maxLineBytes)
	var chunk streamChunk
	var reason string
	var streamErr error
	for {
		ev, err := events.Next()
		now := time.Now()
		if err != nil {
			switch {
			case errors.Is(err, io.EOF) && !events.Partial():
			case errors.Is(err, io.EOF):
				reason, streamErr = reasonStreamCut, errors.New("stream ended inside an event")
			case errors.Is(err, sse.ErrLineTooLong):
				reason, streamErr = reasonLineTooLong, fmt.Errorf("%w (limit %d bytes)", err, maxLineBytes)
			default:
				reason, streamErr = reasonStreamCut, err
			}
			res.E2E = now.Sub(r.Sched)
			break
		}
		if ev.Name == "error" {
			reason, streamErr = reasonErrorInStream, fmt.Errorf("error event: %s", truncate(string(ev.Data), 256))
			res.E2E = now.Sub(r.Sched)
			break
		}
		if bytes.Equal(bytes.TrimSpace(ev.Data), []byte("[DONE]")) {
			st.done = true
			res.E2E = now.Sub(r.Sched)
			// Read to the end of the body, so the connection can be reused.
			_, _ = io.Copy(io.Discard, io.LimitReader(body, maxErrorBody))
			break
		}
		chunk = streamChunk{}
		if err := json.Unmarshal(ev.Data, &chunk); err != nil {
			reason, streamErr = reasonMalformed, fmt.Errorf("malformed chunk: %v: %s", err, truncate(string(ev.Data), 128))
			res.E2E = now.Sub(r.Sched)
			break
		}
		if len(chunk.Error) > 0 && !bytes.Equal(chunk.Error, []byte("null")) {
			reason, streamErr = reasonErrorInStream, fmt.Errorf("error in stream: %s", truncate(string(chunk.Error), 256))
			res.E2E = now.Sub(r.Sched)
			break
		}
		st.observe(&chunk, now.Sub(r.Sched), res)
		if len(st.chunkAt) > st.maxChunks {
			// A server that ignores max_tokens would stream without end: stop reading.
			reason, streamErr = reasonMaxTokens, fmt.Errorf("more than %d output chunks for max_tokens %d: the server does not honour max_tokens", st.maxChunks, r.MaxTokens)
			res.E2E = now.Sub(r.Sched)
			break
		}
	}
	st.finish(res)
	res.splitTTFT()
	if len(res.TTFTParts) > 0 {
		res.logf("ttft split: %s", res.TTFTSplitText())
	}
	switch {
	case streamErr != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.fail(OutcomeTimeout, phaseStream, reasonDeadline, fmt.Sprintf("deadline after %s, %d output tokens in: %v", res.E2E.Round(time.Millisecond), res.OutputChunks, streamErr))
	case streamErr != nil && ctx.Err() != nil:
		res.fail(OutcomeCancelled, phaseStream, reasonCancelled, streamErr.Error())
	case streamErr != nil:
		res.fail(OutcomeStreamError, phaseStream, reason, streamErr.Error())
	case !st.done && res.FinishReason == "":
		res.fail(OutcomeStreamError, phaseStream, reasonNoFinish, "stream ended with neither finish_reason nor [DONE]")
	case res.OutputChunks == 0:
		res.fail(OutcomeStreamError, phaseStream, reasonNoOutput, fmt.Sprintf("the stream ended without an output token (finish_reason %q, %d completion tokens in usage)", res.FinishReason, st.lastUsage.CompletionTokens))
	case r.MaxTokens > 0 && st.lastUsage.CompletionTokens > r.MaxTokens:
		res.fail(OutcomeStreamError, phaseStream, reasonMaxTokens, fmt.Sprintf("usage reports %d completion tokens for max_tokens %d", st.lastUsage.CompletionTokens, r.MaxTokens))
	default:
		res.Outcome = OutcomeSuccess
		if !st.done {
			res.logf("no [DONE] line; finish_reason %q ends the stream", res.FinishReason)
		}
	}
}

// maxOutputChunks is how many output chunks a request may stream before the
// server counts as ignoring max_tokens: a chunk carries at least one token,
// and the margin allows for engines that split a token's bytes.
func maxOutputChunks(maxTokens int) int {
	if maxTokens <= 0 {
		return math.MaxInt
	}
	return 2*maxTokens + 16
}

// observe takes one parsed chunk that arrived at offset at.
func (st *streamState) observe(chunk *streamChunk, at time.Duration, res *Result) {
	prevCompletion := st.lastUsage.CompletionTokens
	if u := chunk.Usage; u != nil && (u.CompletionTokens > 0 || u.PromptTokens > 0) {
		// Zeroed usage objects (Ollama sends one on every chunk) say nothing.
		st.lastUsage = *u
	}
	st.engineTimings(chunk, res)
	reasoning, answer := false, false
	for i := range chunk.Choices {
		ch := &chunk.Choices[i]
		d := &ch.Delta
		if d.ReasoningContent != "" || d.Reasoning != "" {
			reasoning = true
		}
		if ch.Text != "" || d.Content != "" || len(d.ToolCalls) > 0 {
			answer = true
		}
		st.keepAnswer(ch.Text)
		st.keepAnswer(d.Content)
		if ch.FinishReason != "" {
			res.FinishReason = truncate(ch.FinishReason, 32)
		}
	}
	if !reasoning && !answer {
		return
	}
	if len(st.chunkAt) == 0 {
		res.TTFT = at
		res.logf("first token")
	}
	if reasoning {
		if st.reasoningChunks == 0 {
			res.TTFTReasoning = at
		}
		st.reasoningChunks++
	}
	if answer {
		if st.answerChunks == 0 {
			res.TTFTAnswer = at
			if st.reasoningChunks > 0 {
				res.logf("first answer token after %d reasoning chunks", st.reasoningChunks)
			}
		}
		st.answerChunks++
	}
	st.chunkAt = append(st.chunkAt, at)
	// Running usage (vLLM continuous_usage_stats) tells how many tokens this chunk carried.
	if n := st.lastUsage.CompletionTokens - prevCompletion; chunk.Usage != nil && n > 0 {
		st.chunkTokens = append(st.chunkTokens, n)
	} else {
		st.exactCounts = false
	}
}

// engineTimings keeps the last timings object the engine sent; one that is
// garbage is logged once and leaves what was read before.
func (st *streamState) engineTimings(chunk *streamChunk, res *Result) {
	for _, o := range []struct {
		raw   json.RawMessage
		parse func(json.RawMessage) (*EngineTimings, error)
	}{{chunk.Metrics, parseVLLMMetrics}, {chunk.Timings, parseLlamaTimings}} {
		if len(o.raw) == 0 || bytes.Equal(bytes.TrimSpace(o.raw), []byte("null")) {
			continue
		}
		t, err := o.parse(o.raw)
		if err != nil && !st.engineBad {
			st.engineBad = true
			res.logf("engine timings partly ignored: %v", err)
		}
		if t != nil && (t.HasQueue || t.HasPrefill || t.HasDecode) {
			res.Engine = t
		}
	}
}

// keepAnswer keeps the answer's start, and a margin past the limit: scrub
// masks secrets before it cuts the answer to the limit, so no cut leaves
// half of a secret behind.
func (st *streamState) keepAnswer(s string) {
	limit := st.answerLimit + answerMargin
	if s == "" || st.answer.Len() >= limit {
		return
	}
	st.answer.WriteString(truncate(s, limit-st.answer.Len()))
}

// finish derives token counts, TPOT and per-token ITL once the stream ended.
func (st *streamState) finish(res *Result) {
	res.OutputChunks = len(st.chunkAt)
	res.Answer, res.answerLimit = st.answer.String(), st.answerLimit
	res.PromptTokensReported = st.lastUsage.PromptTokens
	if d := st.lastUsage.PromptTokensDetails; d != nil && d.CachedTokens != nil && *d.CachedTokens >= 0 && *d.CachedTokens <= st.lastUsage.PromptTokens {
		res.CachedPromptTokens, res.CachedReported = *d.CachedTokens, true
	}
	if st.lastUsage.CompletionTokens > 0 {
		res.OutputTokens, res.TokenSource = st.lastUsage.CompletionTokens, TokensFromUsage
	} else {
		res.OutputTokens, res.TokenSource = res.OutputChunks, TokensFromChunks
		if res.OutputChunks > 0 {
			res.logf("no usage from the server: %d output tokens counted from chunks", res.OutputChunks)
		}
	}
	if st.lastUsage.CompletionTokens > 0 {
		res.logf("usage: prompt_tokens=%d completion_tokens=%d", st.lastUsage.PromptTokens, st.lastUsage.CompletionTokens)
		if res.CachedReported {
			res.logf("usage: %d prompt tokens from the engine's prefix cache", res.CachedPromptTokens)
		}
	}
	st.splitReasoning(res)
	if res.OutputChunks == 0 {
		return
	}
	if res.OutputTokens > 1 {
		res.TPOT = (res.E2E - res.TTFT) / time.Duration(res.OutputTokens-1)
	}
	res.ITL = perTokenITL(st.chunkAt, st.chunkTokens, st.exactCounts, res.OutputTokens)
	for i := 1; i < len(st.chunkAt); i++ {
		res.MaxGap = max(res.MaxGap, st.chunkAt[i]-st.chunkAt[i-1])
	}
}

// splitReasoning splits the output tokens into reasoning and answer: by the
// server's usage when it reports reasoning tokens, else one token per chunk
// of each kind.
func (st *streamState) splitReasoning(res *Result) {
	if n := st.lastUsage.reasoning(); n > 0 && res.TokenSource == TokensFromUsage {
		res.ReasoningTokens, res.AnswerTokens, res.ReasoningSource = n, max(res.OutputTokens-n, 0), TokensFromUsage
	} else if st.reasoningChunks > 0 {
		res.ReasoningTokens, res.AnswerTokens, res.ReasoningSource = st.reasoningChunks, st.answerChunks, TokensFromChunks
	} else {
		return
	}
	res.logf("reasoning: %d reasoning and %d answer tokens (%s)", res.ReasoningTokens, res.AnswerTokens, res.ReasoningSource)
}

// perTokenITL splits each gap between output chunks over the tokens the later
// chunk carried, so engines that send several tokens per chunk don't inflate
// ITL. Exact per-chunk counts come from running usage; otherwise the tokens
// after the first chunk are spread evenly over the later chunks, carrying the
// fractional remainder so the sample count adds up.
func perTokenITL(at []time.Duration, tokens []int, exact bool, total int) []time.Duration {
	if len(at) < 2 {
		return nil
	}
	gaps := len(at) - 1
	var out []time.Duration
	if exact && len(tokens) == len(at) {
		n := 0
		for _, k := range tokens[1:] {
			n += k
		}
		out = make([]time.Duration, 0, n)
		for i := 1; i < len(at); i++ {
			k := tokens[i]
			for range k {
				out = append(out, (at[i]-at[i-1])/time.Duration(k))
			}
		}
		return out
	}
	later := max(total-1, gaps) // at least one token per later chunk
	perChunk := float64(later) / float64(gaps)
	out = make([]time.Duration, 0, later)
	carry := 0.0
	for i := 1; i < len(at); i++ {
		carry += perChunk
		k := int(carry + 1e-9)
		carry -= float64(k)
		if k < 1 {
			continue
		}
		gap := at[i] - at[i-1]
		for range k {
			out = append(out, gap/time.Duration(k))
		}
	}
	return out
}

// readErrorBody reads a failed response's body, bounded, and returns the
// server's error message (from the usual JSON shapes, else the text) and an
// excerpt of its first bytes.
// Secrets are masked before anything is cut, so no cut leaves half of one.
func (c *Client) readErrorBody(r io.Reader) (msg, excerpt string) {
	b, _ := io.ReadAll(io.LimitReader(r, maxErrorBody))
	b = c.redact.Bytes(b)
	excerpt = printable(truncate(string(b), maxBodyExcerpt))
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(b, &e) == nil {
		var obj struct {
			Message string `json:"message"`
		}
		// Decoded, an escaped secret is itself again: masked once more.
		if json.Unmarshal(e.Error, &obj) == nil && obj.Message != "" {
			return printable(truncate(c.redactText(obj.Message), 256)), excerpt
		}
		var s string
		if json.Unmarshal(e.Error, &s) == nil && s != "" {
			return printable(truncate(c.redactText(s), 256)), excerpt
		}
		if e.Message != "" {
			return printable(truncate(c.redactText(e.Message), 256)), excerpt
		}
	}
	return printable(truncate(strings.TrimSpace(string(b)), 256)), excerpt
}

// printable replaces control characters (a body may be binary) so the text
// is safe in a log line and a page.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || (r >= 0x20 && r != 0x7f && r != utf8.RuneError) {
			return r
		}
		return '.'
	}, s)
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
