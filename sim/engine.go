// Package sim is a simulated continuous-batching inference engine that speaks
// the OpenAI API, for llmprobe's demo and tests.
package sim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/sim/internal/content"
	"github.com/llmprobe/llmprobe/sim/internal/golden"
	"github.com/llmprobe/llmprobe/sim/internal/persona"
	"github.com/llmprobe/llmprobe/sim/internal/prefixcache"
	"github.com/llmprobe/llmprobe/sim/internal/request"
	"github.com/prometheus/client_golang/prometheus"
)

// Engine families the sim can pose as: their metric names on /metrics and
// the way each identifies itself (owned_by, Server header, version endpoint).
const (
	EngineVLLM     = persona.VLLM
	EngineSGLang   = persona.SGLang
	EngineTGI      = persona.TGI
	EngineLlamaCPP = persona.LlamaCPP
	// EngineTEI serves only embeddings and TEI's own /rerank, and no
	// /v1/models, as text-embeddings-inference does.
	EngineTEI = persona.TEI
)

// Engines lists the generating families Config.Engine accepts besides ""
// (the sim's own identity, with vLLM's metric names).
var Engines = persona.Families

// PoolingEngines lists the families Config.Engine accepts that only embed
// and rank.
var PoolingEngines = persona.PoolingFamilies

// Config sets the engine's capacity, costs and faults.
type Config struct {
	Seed             int64         // seeds token text and fault draws
	Model            string        // served by /v1/models
	Version          string        // what the version endpoint reports
	Engine           string        // family posed as (one of Engines): metric names, identity; "" is the sim, with vLLM's names
	MaxBatch         int           // running sequences at most
	MaxQueue         int           // waiting requests at most; beyond it 429 at once
	PrefillBase      time.Duration // fixed cost of a step that admits sequences
	PrefillPerToken  time.Duration // plus this per prompt token admitted
	DecodeBase       time.Duration // a decode step with one running sequence
	DecodePerSeq     time.Duration // added per further running sequence
	DefaultMaxTokens int           // when a request sets no max_tokens
	Answer           string        // output words (cycled); empty means words from a vocabulary
	Faults           Faults
	// TruthStamps makes the engine record when it wrote each output chunk,
	// per request, for GET /sim/truth: benchmarks measure the prober's
	// timing error against it.
	TruthStamps bool
	// PerRequestMetrics answers a request that sets include_metrics with its
	// queue, prefill and decode times, as vLLM does when started with
	// --enable-per-request-metrics. Posing as llama.cpp, the engine sends
	// llama.cpp's timings object instead, always, as llama.cpp does.
	PerRequestMetrics bool
	// PrefixCacheTokens is the prefix cache's size in tokens (0: no cache):
	// a prompt's leading blocks that an earlier prompt sent cost no prefill,
	// and the usage reports them as prompt_tokens_details.cached_tokens.
	PrefixCacheTokens int
	// ImagePatch is the side, in pixels, of the square one image token
	// stands for (0: 28, Qwen2-VL's): an image's prefill grows with its
	// pixels.
	ImagePatch int
	// Golden names a golden set (llmprobe's JSONL): a prompt of it, after
	// llmprobe's nonce line, is answered with its reference answer, and
	// GoldenWrongRate of them (seeded by Seed and each request's text)
	// wrong.
	Golden          string
	GoldenWrongRate float64
	// WordsPerAudioSecond is how fast the speech of a clip with no
	// transcript in its WAV comment is: its transcript is that many seeded
	// words a second of audio, counted up (2.5 is 150 words a minute).
	WordsPerAudioSecond float64
	// TranscriptWordErrorRate is the share of a transcript's words the sim
	// mishears: replaced by other words, drawn from Seed and the request's
	// arrival number.
	TranscriptWordErrorRate float64
	// SpecDecode, with DraftTokens > 0, poses a draft model: each decode
	// step drafts DraftTokens, of which the share Acceptance is accepted,
	// as the family's speculative-decoding metrics report it (vLLM's and
	// llama.cpp's counters, SGLang's gauges). Timing is not changed.
	SpecDecode persona.SpecDecode
	// KVTransfer, when set, disaggregates prefill: each admitted prompt's
	// KV cache reaches decode this much after its prefill, so the step that
	// admits it costs this much more, and the family's KV-transfer
	// histogram observes it (vLLM's NIXL connector's, SGLang's).
	KVTransfer time.Duration
	// Adapters are LoRA adapters served beside Model as model names of
	// their own (vLLM's --lora-modules); a step that admits a request of
	// one costs AdapterPrefill more (its weights' work).
	Adapters       []string
	AdapterPrefill time.Duration
}

// DefaultConfig is a small GPU-like engine: 32 sequences, 20 ms prefill,
// 10 ms decode steps growing 0.2 ms per extra sequence.
func DefaultConfig() Config {
	return Config{
		Seed:                1,
		Model:               "sim-model",
		Version:             "0.1.0",
		MaxBatch:            32,
		MaxQueue:            256,
		PrefillBase:         20 * time.Millisecond,
		PrefillPerToken:     50 * time.Microsecond,
		DecodeBase:          10 * time.Millisecond,
		DecodePerSeq:        200 * time.Microsecond,
		DefaultMaxTokens:    16,
		PerRequestMetrics:   true,
		WordsPerAudioSecond: 2.5,
		Faults:              Faults{RoleOnlyFirstChunk: true, TokensPerChunk: 1, UsagePlacement: UsageSeparate},
	}
}

func (c *Config) validate() error {
	var errs []error
	if c.Model == "" {
		errs = append(errs, errors.New("model must not be empty"))
	}
	if c.MaxBatch < 1 {
		errs = append(errs, fmt.Errorf("max batch %d must be at least 1", c.MaxBatch))
	}
	if c.MaxQueue < 0 {
		errs = append(errs, fmt.Errorf("max queue %d must not be negative", c.MaxQueue))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"prefill base", c.PrefillBase}, {"prefill per token", c.PrefillPerToken}, {"decode base", c.DecodeBase}, {"decode per sequence", c.DecodePerSeq}, {"kv transfer", c.KVTransfer}, {"adapter prefill", c.AdapterPrefill}} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("%s %s must not be negative", d.name, d.v))
		}
	}
	if c.Engine != "" && !slices.Contains(Engines, c.Engine) && !slices.Contains(PoolingEngines, c.Engine) {
		errs = append(errs, fmt.Errorf("engine %q is not one of %s (or empty for the sim itself)", c.Engine, strings.Join(slices.Concat(Engines, PoolingEngines), ", ")))
	}
	if c.PrefixCacheTokens < 0 {
		errs = append(errs, fmt.Errorf("prefix cache tokens %d must not be negative", c.PrefixCacheTokens))
	}
	if c.ImagePatch < 0 {
		errs = append(errs, fmt.Errorf("image patch %d must not be negative", c.ImagePatch))
	}
	if c.GoldenWrongRate != 0 && c.Golden == "" {
		errs = append(errs, fmt.Errorf("golden wrong rate %g needs a golden set", c.GoldenWrongRate))
	}
	if !(c.WordsPerAudioSecond > 0 && c.WordsPerAudioSecond <= 20) { // NaN too
		errs = append(errs, fmt.Errorf("words per audio second %g must be within (0, 20]", c.WordsPerAudioSecond))
	}
	if !(c.TranscriptWordErrorRate >= 0 && c.TranscriptWordErrorRate <= 1) {
		errs = append(errs, fmt.Errorf("transcript word error rate %g must be within [0, 1]", c.TranscriptWordErrorRate))
	}
	if sd := c.SpecDecode; sd.DraftTokens < 0 || sd.DraftTokens > 64 || !(sd.Acceptance >= 0 && sd.Acceptance <= 1) || (sd.DraftTokens == 0 && sd.Acceptance != 0) {
		errs = append(errs, fmt.Errorf("speculative decoding of %d draft tokens at acceptance %g: draft tokens must be within [0, 64], acceptance within [0, 1] and only with draft tokens", sd.DraftTokens, sd.Acceptance))
	}
	for i, a := range c.Adapters {
		if a == "" || a == c.Model || slices.Contains(c.Adapters[:i], a) {
			errs = append(errs, fmt.Errorf("adapter %q must be named, unlike the model and every other adapter", a))
		}
	}
	if c.DefaultMaxTokens < 1 {
		errs = append(errs, fmt.Errorf("default max tokens %d must be at least 1", c.DefaultMaxTokens))
	}
	if err := c.Faults.validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Engine is the simulated engine. One scheduler goroutine owns the queue and
// the running batch.
type Engine struct {
	cfg Config
	reg *prometheus.Registry
	m   *persona.Metrics

	mu       sync.Mutex
	faults   Faults
	version  string
	waiting  []*sequence
	running  []*sequence
	arrivals uint64
	stats    Stats
	cache    *prefixcache.Cache // nil without one; owned by mu

	truth  *truthLog   // nil unless cfg.TruthStamps
	golden *golden.Set // nil unless cfg.Golden

	wake chan struct{}
	stop chan struct{}
	done chan struct{}
}

// Stats counts what the engine did.
type Stats struct {
	Running, Waiting              int
	Admitted, Completed, Rejected uint64
	Cancelled                     uint64
}

// sequence is one request inside the engine.
type sequence struct {
	ctx          context.Context
	promptTokens int
	blocks       []uint64 // the prompt's block hashes, for the prefix cache
	cachedTokens int      // of promptTokens, found in the prefix cache at admission
	maxTokens    int
	stop         bool   // the answer ends before max_tokens (finish_reason stop)
	adapter      string // the LoRA adapter it asked for, "" for the base model
	generated    int
	arrived      time.Time
	admitted     time.Time
	first, last  time.Time
	// counted: LongRun judges it (it arrived after the warm-up).
	counted bool
	// out gets one value per token, then is closed; buffered for the whole
	// response so the scheduler never waits on a slow client.
	out chan struct{}
}

// course is the sequence as its family's metrics and timings read it. The
// scheduler writes the times before it hands over the token they belong
// to, so reading them after the last token is safe.
func (s *sequence) course() persona.Request {
	return persona.Request{PromptTokens: s.promptTokens, Generated: s.generated, Arrived: s.arrived, Admitted: s.admitted, First: s.first, Last: s.last}
}

// New validates cfg and starts the scheduler.
func New(cfg Config) (*Engine, error) {
	e, err := newEngine(cfg)
	if err != nil {
		return nil, err
	}
	go e.loop()
	return e, nil
}

// newEngine is an engine whose scheduler nobody started yet: New starts it
// on the wall clock, LongRun drives its steps on a virtual one.
func newEngine(cfg Config) (*Engine, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	if cfg.ImagePatch == 0 {
		cfg.ImagePatch = content.DefaultPatch
	}
	e := &Engine{
		cfg:     cfg,
		reg:     prometheus.NewRegistry(),
		faults:  cfg.Faults.withDefaults(),
		version: cfg.Version,
		cache:   prefixcache.New(cfg.PrefixCacheTokens),
		wake:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	if cfg.Golden != "" {
		g, err := golden.Load(cfg.Golden, cfg.GoldenWrongRate, cfg.Seed)
		if err != nil {
			return nil, fmt.Errorf("sim: %w", err)
		}
		e.golden = g
	}
	e.m = persona.NewMetrics(e.reg, cfg.Engine, cfg.Model, cfg.MaxBatch, e.load, persona.Features{SpecDecode: cfg.SpecDecode, KVTransfer: cfg.KVTransfer > 0, MaxLoRA: len(cfg.Adapters)})
	if cfg.TruthStamps {
		e.truth = newTruthLog()
	}
	return e, nil
}

// Close stops the scheduler; streams in flight end.
func (e *Engine) Close() {
	select {
	case <-e.stop:
	default:
		close(e.stop)
	}
	<-e.done
}

// SetFaults replaces the faults for requests arriving afterwards.
func (e *Engine) SetFaults(f Faults) error {
	if err := f.validate(); err != nil {
		return err
	}
	e.mu.Lock()
	e.faults = f.withDefaults()
	e.mu.Unlock()
	return nil
}

// Faults returns the faults in force.
func (e *Engine) Faults() Faults {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.faults
}

// SetVersion changes what /version reports: an engine "upgrade".
func (e *Engine) SetVersion(v string) {
	e.mu.Lock()
	e.version = v
	e.mu.Unlock()
}

func (e *Engine) currentVersion() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.version
}

// load is what runs and waits now, for the family's gauges.
func (e *Engine) load() persona.Load {
	e.mu.Lock()
	defer e.mu.Unlock()
	l := persona.Load{Running: len(e.running), Waiting: len(e.waiting)}
	for _, q := range []struct {
		seqs []*sequence
		into *[]string
	}{{e.running, &l.RunningAdapters}, {e.waiting, &l.WaitingAdapters}} {
		for _, s := range q.seqs {
			if s.adapter != "" && !slices.Contains(*q.into, s.adapter) {
				*q.into = append(*q.into, s.adapter)
			}
		}
	}
	return l
}

// Stats returns a snapshot of the engine's counters.
func (e *Engine) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.stats
	s.Running, s.Waiting = len(e.running), len(e.waiting)
	return s
}

var errQueueFull = errors.New("queue full")

// submit queues a sequence, or refuses it when the queue is full. It returns
// the arrival number that seeds the request's text and faults.
func (e *Engine) submit(s *sequence) error {
	e.mu.Lock()
	if len(e.waiting) >= e.cfg.MaxQueue {
		e.stats.Rejected++
		e.mu.Unlock()
		return errQueueFull
	}
	e.waiting = append(e.waiting, s)
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
	return nil
}

// nextArrival numbers requests in arrival order; the number seeds their randomness.
func (e *Engine) nextArrival() (uint64, Faults) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.arrivals++
	return e.arrivals, e.faults
}

// loop runs engine steps: admit waiting sequences into the batch, pay the
// step's cost in time, then give every sequence in the batch one token.
func (e *Engine) loop() {
	defer close(e.done)
	defer e.drain()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var deadline time.Time
	for {
		e.mu.Lock()
		e.dropCancelled()
		if len(e.waiting) == 0 && len(e.running) == 0 {
			e.mu.Unlock()
			select {
			case <-e.wake:
				deadline = time.Time{}
				continue
			case <-e.stop:
				return
			}
		}
		// Admission is now: a sequence's queue time ends here, and its
		// prefill runs from here to its first token, in wall-clock time (a
		// late step shortens the next one, so end-cost is not the start).
		stepStart := time.Now()
		admitted, cost := e.admit()
		e.mu.Unlock()

		// Deadlines chain while the engine is busy, so steps don't drift.
		now := time.Now()
		if deadline.Before(now.Add(-cost)) {
			deadline = now
		}
		deadline = deadline.Add(cost)
		timer.Reset(time.Until(deadline))
		select {
		case <-timer.C:
		case <-e.stop:
			e.mu.Lock()
			e.running = append(e.running, admitted...)
			e.mu.Unlock()
			return
		}

		e.mu.Lock()
		e.advance(admitted, stepStart, time.Now())
		e.mu.Unlock()
	}
}

// admit takes waiting sequences into the next step as far as the batch has
// room, and returns them with what the step costs: their prefill, and a
// decode step for the sequences already running. Called with mu held.
func (e *Engine) admit() (admitted []*sequence, cost time.Duration) {
	decoding := len(e.running)
	prompt := 0
	for len(e.waiting) > 0 && len(e.running)+len(admitted) < e.cfg.MaxBatch {
		s := e.waiting[0]
		e.waiting = e.waiting[1:]
		admitted = append(admitted, s)
		s.cachedTokens = e.cache.Admit(s.blocks, s.promptTokens)
		prompt += s.promptTokens - s.cachedTokens
		if s.adapter != "" {
			cost += e.cfg.AdapterPrefill
		}
	}
	e.stats.Admitted += uint64(len(admitted))
	if len(admitted) > 0 {
		cost += e.cfg.PrefillBase + time.Duration(prompt)*e.cfg.PrefillPerToken + e.cfg.KVTransfer
	}
	if decoding > 0 {
		cost += e.cfg.DecodeBase + time.Duration(decoding-1)*e.cfg.DecodePerSeq
	}
	return admitted, cost
}

// advance ends a step that started at start and ended at end: the admitted
// sequences join the batch, and every running one gets a token. Called
// with mu held.
func (e *Engine) advance(admitted []*sequence, start, end time.Time) {
	for _, s := range admitted {
		s.admitted = start
		e.m.Admitted(s.course(), e.cfg.KVTransfer)
	}
	e.running = append(e.running, admitted...)
	kept := e.running[:0]
	for _, s := range e.running {
		if e.emit(s, end) {
			kept = append(kept, s)
		}
	}
	clear(e.running[len(kept):])
	e.running = kept
}

// emit gives s its next token; it reports whether s is still running.
func (e *Engine) emit(s *sequence, now time.Time) bool {
	e.m.Token(s.course(), now)
	if s.generated == 0 {
		s.first = now
	}
	s.generated++
	s.last = now
	s.out <- struct{}{}
	if s.generated < s.maxTokens {
		return true
	}
	close(s.out)
	e.stats.Completed++
	e.m.Finished(s.course(), now)
	return false
}

// dropCancelled removes sequences whose client went away. Called with mu held.
func (e *Engine) dropCancelled() {
	keep := func(list []*sequence) []*sequence {
		kept := list[:0]
		for _, s := range list {
			if s.ctx.Err() != nil {
				close(s.out)
				e.stats.Cancelled++
				continue
			}
			kept = append(kept, s)
		}
		clear(list[len(kept):])
		return kept
	}
	e.waiting = keep(e.waiting)
	e.running = keep(e.running)
}

// drain ends every sequence when the engine stops.
func (e *Engine) drain() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range append(e.waiting, e.running...) {
		close(s.out)
	}
	e.waiting, e.running = nil, nil
}

// promptDetails is what the usage says of the prefix cache: nothing without
// one (blocks are hashed only with a cache).
func (s *sequence) promptDetails() *promptDetails {
	if s == nil || s.blocks == nil {
		return nil
	}
	return &promptDetails{CachedTokens: s.cachedTokens}
}

// goldenAnswer is the golden set's answer to req as tokens, cut to
// maxTokens, and whether it ended within them (finish_reason stop); nil
// without a golden set or for a prompt it does not hold.
func (e *Engine) goldenAnswer(req *request.Generate, maxTokens int) ([]string, bool) {
	if e.golden == nil {
		return nil, false
	}
	tokens := e.golden.Answer(req.Texts())
	if len(tokens) > maxTokens {
		return tokens[:maxTokens], false
	}
	return tokens, tokens != nil
}

// finishReason is why s's answer ended: its own end, or max_tokens.
func (s *sequence) finishReason() string {
	if s.stop {
		return "stop"
	}
	return "length"
}
