package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/llmprobe/llmprobe/sim/internal/messages"
	"github.com/llmprobe/llmprobe/sim/internal/persona"
	"github.com/llmprobe/llmprobe/sim/internal/pooling"
	"github.com/llmprobe/llmprobe/sim/internal/request"
	"github.com/llmprobe/llmprobe/sim/internal/responses"
)

// Handler serves the OpenAI-compatible API, the family's version endpoint,
// /health, /metrics and /sim/faults.
func (e *Engine) Handler() http.Handler {
	mux := http.NewServeMux()
	id := persona.IdentityOf(e.cfg.Engine, e.cfg.Model)
	mux.HandleFunc("POST /v1/embeddings", e.servePooled(pooling.Embeddings))
	if id.PoolingOnly {
		mux.HandleFunc("POST /rerank", e.servePooled(pooling.RerankTEI))
	} else {
		mux.HandleFunc("POST /v1/completions", func(w http.ResponseWriter, r *http.Request) { e.serveGenerate(w, r, apiCompletions) })
		mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { e.serveGenerate(w, r, apiChat) })
		mux.HandleFunc("POST /v1/responses", func(w http.ResponseWriter, r *http.Request) { e.serveGenerate(w, r, apiResponses) })
		mux.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) { e.serveGenerate(w, r, apiMessages) })
		mux.HandleFunc("POST /v1/audio/transcriptions", e.serveTranscription)
		mux.HandleFunc("POST /v1/rerank", e.servePooled(pooling.Rerank))
		mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
			// The base model first; each adapter after it, with its parent,
			// as vLLM lists its --lora-modules.
			data := []map[string]any{{"id": e.cfg.Model, "object": "model", "created": 0, "owned_by": id.OwnedBy, "max_model_len": 32768}}
			for _, a := range e.cfg.Adapters {
				data = append(data, map[string]any{"id": a, "object": "model", "created": 0, "owned_by": id.OwnedBy, "parent": e.cfg.Model})
			}
			writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
		})
	}
	mux.HandleFunc("GET "+id.VersionPath, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, id.Version(e.currentVersion()))
	})
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {})
	if e.truth != nil {
		mux.HandleFunc("GET /sim/truth", e.truth.Serve)
	}
	mux.Handle("GET /metrics", promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /sim/faults", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, e.Faults()) })
	mux.HandleFunc("PUT /sim/faults", func(w http.ResponseWriter, r *http.Request) {
		var f Faults
		dec := json.NewDecoder(io.LimitReader(r.Body, 1<<16))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			apiError(w, http.StatusBadRequest, "BadRequestError", "faults: "+err.Error())
			return
		}
		if err := e.SetFaults(f); err != nil {
			apiError(w, http.StatusBadRequest, "BadRequestError", "faults: "+err.Error())
			return
		}
		writeJSON(w, http.StatusOK, e.Faults())
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if server := id.Server(e.currentVersion()); server != "" {
			w.Header().Set("Server", server)
		}
		mux.ServeHTTP(w, r)
		if e.Faults().CloseAfterStream {
			closeAfterStream(w, r)
		}
	})
}

// readGenerate reads a generation request of api and what it costs: its
// prompt's tokens and the answer's; false when it was refused, as an
// engine refuses it (the answer is written). With truth stamps, receipt
// gets the moment the request was read.
func (e *Engine) readGenerate(w http.ResponseWriter, r *http.Request, api endpoint, receipt *Receipt) (req *request.Generate, prompt, maxTokens int, ok bool) {
	req, err := request.Read(w, r.Body, api.kind())
	if e.truth != nil {
		*receipt = ReceiptOf(r)
	}
	switch {
	case errors.Is(err, request.ErrTooLarge):
		apiError(w, http.StatusRequestEntityTooLarge, "BadRequestError", err.Error())
		return nil, 0, 0, false
	case err != nil:
		apiError(w, http.StatusBadRequest, "BadRequestError", err.Error())
		return nil, 0, 0, false
	}
	if !e.servesModel(w, req.Model) {
		return nil, 0, 0, false
	}
	if prompt, err = req.PromptTokens(e.cfg.ImagePatch); err != nil {
		apiError(w, http.StatusBadRequest, "BadRequestError", err.Error())
		return nil, 0, 0, false
	}
	if maxTokens = req.AnswerTokens(e.cfg.DefaultMaxTokens); maxTokens < 1 {
		apiError(w, http.StatusBadRequest, "BadRequestError", "max_tokens must be at least 1")
		return nil, 0, 0, false
	}
	return req, prompt, maxTokens, true
}

// servesModel says whether a request's model is the sim's; false is
// answered: 400 when it names none, 404 when another.
func (e *Engine) servesModel(w http.ResponseWriter, model string) bool {
	switch {
	case model == e.cfg.Model || slices.Contains(e.cfg.Adapters, model):
		return true
	case model == "":
		apiError(w, http.StatusBadRequest, "BadRequestError", "model is required")
	default:
		apiError(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("The model `%s` does not exist.", model))
	}
	return false
}

func (e *Engine) serveGenerate(w http.ResponseWriter, r *http.Request, api endpoint) {
	var receipt Receipt
	req, prompt, maxTokens, ok := e.readGenerate(w, r, api, &receipt)
	if !ok {
		return
	}
	answer, stop := e.goldenAnswer(req, maxTokens)
	if answer != nil {
		maxTokens = len(answer)
	}
	a, ok := e.arrive(w, r)
	if !ok {
		return
	}
	faults := a.faults
	shape, err := e.shapeOf(req, a.n, faults.Shaped)
	if err != nil {
		apiError(w, http.StatusBadRequest, "BadRequestError", err.Error())
		return
	}
	switch {
	case answer != nil: // the golden answer is the whole answer, whatever shape was asked
		shape, faults.ReasoningTokens = nil, 0
	case shape != nil:
		maxTokens, faults.ReasoningTokens = min(maxTokens, shape.Tokens()), 0
	}
	s := newSequence(r.Context(), prompt, maxTokens, stop)
	if req.Model != e.cfg.Model {
		s.adapter = req.Model
	}
	if e.cache != nil {
		s.blocks = req.Blocks()
	}
	if !e.enqueue(w, s) {
		return
	}
	words := answer
	switch {
	case words != nil:
	case shape != nil:
		words = shape.Words()[:maxTokens]
	default:
		words = e.words(a.rng, maxTokens)
	}
	st := &streamWriter{w: w, chat: api != apiCompletions, id: fmt.Sprintf("cmpl-sim-%d", a.n), model: e.cfg.Model, created: time.Now().Unix(),
		faults: faults, plan: a.plan, prompt: prompt, words: words, timings: e.timingsFor(req), seq: s, shape: shape}
	if !req.Stream {
		st.whole(r.Context(), s, api)
		return
	}
	switch api {
	case apiResponses:
		st.events = responses.New(st.id, e.cfg.Model, st.created)
		st.includeUsage = faults.UsagePlacement != UsageNone
	case apiMessages:
		st.events = messages.New(st.id, e.cfg.Model, prompt)
		st.includeUsage = faults.UsagePlacement != UsageNone
	}
	if req.StreamOptions != nil {
		st.includeUsage = req.StreamOptions.IncludeUsage && faults.UsagePlacement != UsageNone
		st.continuous = req.StreamOptions.ContinuousUsageStats && faults.UsagePlacement != UsageNone
	}
	e.stream(r, st, receipt)
}

// arrival is a request as the engine numbered it: its arrival number, the
// generator that number seeds, the faults in force and its draws of them.
type arrival struct {
	n      uint64
	rng    *rand.Rand
	faults Faults
	plan   plan
}

// arrive numbers a request and draws its faults; false when a fault took
// it: a hang, until the client leaves, or a failure (the error written).
func (e *Engine) arrive(w http.ResponseWriter, r *http.Request) (arrival, bool) {
	n, faults := e.nextArrival()
	rng := rand.New(rand.NewPCG(uint64(e.cfg.Seed), n))
	a := arrival{n: n, rng: rng, faults: faults, plan: drawPlan(rng, faults)}
	if faults.Hang {
		<-r.Context().Done()
		return a, false
	}
	if a.plan.fail {
		apiError(w, faults.ErrorStatus, "InternalServerError", "simulated failure")
		return a, false
	}
	return a, true
}

// newSequence is a request for the engine: prompt tokens to prefill, then
// maxTokens to make; stop says the answer ends there of itself.
func newSequence(ctx context.Context, prompt, maxTokens int, stop bool) *sequence {
	return &sequence{ctx: ctx, promptTokens: prompt, maxTokens: maxTokens, stop: stop, arrived: time.Now(), out: make(chan struct{}, maxTokens)}
}

// enqueue hands s to the engine; false when its queue is full (429 written).
func (e *Engine) enqueue(w http.ResponseWriter, s *sequence) bool {
	if err := e.submit(s); err != nil {
		apiError(w, http.StatusTooManyRequests, "RateLimitError", "the simulated engine's queue is full")
		return false
	}
	return true
}

// stream writes st's answer as the engine makes it. With truth stamps it
// keeps the stamps and the request's receipt under the client's
// X-Request-Id, else the response id.
func (e *Engine) stream(r *http.Request, st *streamWriter, receipt Receipt) {
	if e.truth != nil {
		st.stamps = make([]int64, 0, min(st.seq.maxTokens, 4096))
		defer func() {
			key := r.Header.Get("X-Request-Id")
			if key == "" {
				key = st.id
			}
			e.truth.Keep(key, st.stamps, receipt)
		}()
	}
	st.run(r.Context(), st.seq)
}

// plan is one request's fault draws.
type plan struct {
	fail, stall, disconnect, malformed bool
}

func drawPlan(rng *rand.Rand, f Faults) plan {
	// Every draw happens, whatever the rates, so one fault's rate never
	// shifts another's draws.
	return plan{
		fail:       rng.Float64() < f.ErrorRate,
		stall:      rng.Float64() < f.StallRate,
		disconnect: rng.Float64() < f.DisconnectRate,
		malformed:  rng.Float64() < f.MalformedRate,
	}
}

var vocabulary = strings.Fields("lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris nisi aliquip ex ea commodo consequat")

// words draws the response's tokens: one word, with a leading space, each.
func (e *Engine) words(rng *rand.Rand, n int) []string {
	out := make([]string, n)
	answer := strings.Fields(e.cfg.Answer)
	for i := range out {
		if len(answer) > 0 {
			out[i] = answer[i%len(answer)]
		} else {
			out[i] = vocabulary[rng.IntN(len(vocabulary))]
		}
		if i > 0 || len(answer) == 0 {
			out[i] = " " + out[i]
		}
	}
	return out
}

// waitToken blocks until the engine produced s's next token; false when
// s ended first, or its client left.
func waitToken(ctx context.Context, s *sequence) bool {
	select {
	case _, ok := <-s.out:
		return ok
	case <-ctx.Done():
		return false
	}
}

// waitAll blocks until the engine produced every token of s; false as
// waitToken.
func waitAll(ctx context.Context, s *sequence) bool {
	for range s.maxTokens {
		if !waitToken(ctx, s) {
			return false
		}
	}
	return true
}

// whole answers in one body once every token is made: a chat answer's
// leading tokens are its reasoning, as a stream's are; usage placed
// nowhere leaves its usage out.
func (st *streamWriter) whole(ctx context.Context, s *sequence, api endpoint) {
	if !waitAll(ctx, s) {
		return
	}
	finish := st.finish(s.maxTokens)
	calls := st.shape != nil && st.shape.Calls != nil && finish != "length"
	split := 0
	if st.chat && !calls {
		split = min(st.faults.ReasoningTokens, len(st.words))
	}
	reasoning, text := strings.Join(st.words[:split], ""), strings.Join(st.words[split:], "")
	var usage *usageJSON
	if st.faults.UsagePlacement != UsageNone {
		usage = st.usage(s.maxTokens)
	}
	if api == apiMessages {
		ms := messages.New(st.id, st.model, st.prompt)
		switch {
		case calls:
			st.shape.Events(ms, 0, st.shape.Tokens())
		default:
			if reasoning != "" {
				ms.Delta(reasoning, true)
			}
			ms.Delta(text, false)
		}
		writeJSON(st.w, http.StatusOK, ms.Whole(finish, messagesUsage(usage)))
		return
	}
	if api == apiResponses {
		if calls {
			rs := responses.New(st.id, st.model, st.created)
			st.shape.Events(rs, 0, st.shape.Tokens())
			writeJSON(st.w, http.StatusOK, rs.Final(responsesUsage(usage)))
			return
		}
		writeJSON(st.w, http.StatusOK, responses.Whole(st.id, st.model, st.created, reasoning, text, responsesUsage(usage)))
		return
	}
	object, choice := "text_completion", map[string]any{"index": 0, "text": text, "finish_reason": finish, "logprobs": nil}
	if st.chat {
		message := map[string]any{"role": "assistant", "content": text}
		switch {
		case calls:
			message = st.shape.Message()
		case reasoning != "":
			message["reasoning_content"] = reasoning
		}
		object, choice = "chat.completion", map[string]any{"index": 0, "message": message, "finish_reason": finish, "logprobs": nil}
	}
	body := map[string]any{"id": st.id, "object": object, "created": st.created, "model": st.model, "choices": []any{choice}, "usage": usage}
	switch st.timings {
	case persona.TimingsVLLM:
		body["metrics"] = persona.RequestMetricsOf(s.course())
	case persona.TimingsLlamaCPP:
		body["timings"] = persona.LlamaTimingsOf(s.course())
	}
	writeJSON(st.w, http.StatusOK, body)
}

// timingsFor says which timings object a request's response carries.
func (e *Engine) timingsFor(req *request.Generate) persona.TimingsKind {
	return persona.TimingsFor(e.cfg.Engine, e.cfg.PerRequestMetrics, req.IncludeMetrics)
}

type usageJSON struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	// With reasoning, the reasoning tokens among the completion tokens, in
	// OpenAI's shape (SGLang reports the count as a top-level reasoning_tokens).
	CompletionTokensDetails *tokensDetails `json:"completion_tokens_details,omitempty"`
	// With a prefix cache, the prompt tokens it served, as vLLM reports
	// them with --enable-prompt-tokens-details.
	PromptTokensDetails *promptDetails `json:"prompt_tokens_details,omitempty"`
}

type promptDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

type tokensDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func apiError(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": status}})
}
