package config

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/alecthomas/units"

	"github.com/llmprobe/llmprobe/replay"
)

// Limits bound what one burst may make llmprobe hold in memory; a burst whose
// plan goes past one is refused when the configuration loads.
type Limits struct {
	// MaxPlannedRequests bounds one run of a burst, warmup and every sweep step included.
	MaxPlannedRequests int `yaml:"max_planned_requests,omitempty"`
	// MaxPromptTokens bounds the longest prompt any scenario may send.
	MaxPromptTokens int `yaml:"max_prompt_tokens,omitempty"`
	// MaxBurstMemory bounds a burst's worst-case memory (see Footprint).
	MaxBurstMemory units.Base2Bytes `yaml:"max_burst_memory,omitempty"`
	// MaxCanaryRate bounds the requests per second all canaries send together.
	MaxCanaryRate float64 `yaml:"max_canary_rate,omitempty"`
	// MaxCanaryMemory bounds what canary requests in flight may hold, each
	// target hanging to its timeout (see CanaryFootprint).
	MaxCanaryMemory units.Base2Bytes `yaml:"max_canary_memory,omitempty"`
}

// DefaultLimits fit a burst beside the daemon in the 512 MiB the deploy files give it.
var DefaultLimits = Limits{
	MaxPlannedRequests: 200_000,
	MaxPromptTokens:    128 << 10,
	MaxBurstMemory:     256 * units.MiB,
	MaxCanaryRate:      100,
	MaxCanaryMemory:    256 * units.MiB,
}

// Hard ranges, for values and for the limits themselves.
const (
	maxTokens          = 1 << 20
	minRate, maxRate   = 0.001, 100_000
	maxPlannedCeiling  = 10_000_000
	maxConcurrency     = 10_000
	minBurstiness      = 0.01
	maxBurstiness      = 100
	maxSweepSteps      = 100
	lognormalMaxFactor = 10 // a lognormal without max stops at this many times its mean
	maxEmpiricalValues = 10_000
	maxPairErrors      = 5  // bad pairs named one by one before the rest are counted
	datasetNonceTokens = 16 // the nonce line before a dataset's prompt, estimated generously
)

// Memory one request costs: upper bounds that burst's TestFootprintBounds
// holds against real results (2.0 KiB for 64 streamed tokens).
const (
	resultBytes      = 4 << 10 // a measured result with its log, checks and answer preview
	bytesPerITL      = 8       // one inter-token latency per output token
	bytesPerWord     = 11      // a synthetic token: a word of up to 10 bytes and its space
	bytesPerPrompt   = 3 * 11  // a literal or dataset token: its text and the JSON-escaped copy, which escapes lengthen
	nonceTokens      = 4       // the nonce before a synthetic prompt's own words
	bodyMarkBytes    = 4       // a synthetic body's index: one int32 per 64 words
	streamBytes      = 96 << 10
	queuedBytes      = 96 // a released request waiting for a slot, with a trace's lengths (and ids: Footprint)
	qualityKeepBytes = 64 << 10
)

// MaxInlineBody is the longest request body the prober sends as one buffer
// (a copy of the prompt) with its headers; a longer one is written from
// the prompt's pieces where they are, after the headers.
const MaxInlineBody = 16 << 10

// Footprint is what one run of a burst may hold at most.
type Footprint struct {
	Requests int   // planned, warmup and every sweep step included
	Measured int   // of which measured (results kept for the report)
	Bytes    int64 // worst-case memory
}

func (f Footprint) String() string {
	return fmt.Sprintf("at most %d planned requests (%d measured), worst-case memory %s", f.Requests, f.Measured, humanBytes(f.Bytes))
}

func humanBytes(b int64) string {
	switch {
	case b >= 1<<30:
		return strconv.FormatFloat(float64(b)/(1<<30), 'f', 1, 64) + " GiB"
	case b >= 1<<20:
		return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) + " MiB"
	default:
		return strconv.FormatFloat(float64(b)/(1<<10), 'f', 1, 64) + " KiB"
	}
}

// PlannedRequests bounds how many requests one run at rate plans: warmup
// and measured. A run whose random arrivals would bring more stops planning
// there, so the bound holds by construction.
func (b Burst) PlannedRequests(rate float64) (warmup, measured int) {
	upTo := func(d time.Duration) int {
		// The mean count plus six standard deviations of a renewal process
		// whose gaps have a squared coefficient of variation 1/burstiness.
		n := rate * d.Seconds()
		cv2 := 1.0
		switch b.Arrival.Process {
		case ArrivalConstant:
			cv2 = 0
		case ArrivalGamma:
			cv2 = 1 / b.Arrival.Burstiness
		}
		return int(math.Ceil(n + 6*math.Sqrt(n*cv2) + 1))
	}
	if s := b.Arrival.scan; b.Arrival.Process == ArrivalTrace && s != nil {
		return s.Warmup, s.Measured // the trace's own count, read at load
	}
	warmup = b.Warmup.Requests
	if b.Warmup.Duration > 0 {
		warmup = upTo(b.Warmup.Duration.Std())
	}
	measured = b.Requests
	if b.Duration > 0 {
		measured = upTo(b.Duration.Std())
	}
	return warmup, measured
}

// Rates lists the rates one run of b sends at: its own, or its sweep's
// steps, lowest first.
func (b Burst) Rates() []float64 {
	if s := b.Arrival.scan; b.Arrival.Process == ArrivalTrace && s != nil {
		return []float64{s.Rate}
	}
	if b.Sweep == nil {
		return []float64{b.Arrival.Rate}
	}
	if len(b.Sweep.Rates) > 0 {
		return slices.Sorted(slices.Values(b.Sweep.Rates))
	}
	var out []float64
	a := b.Sweep.Auto
	for i := 0; i <= maxSweepSteps; i++ {
		r := a.Start + float64(i)*a.Step
		if r > a.Max*(1+1e-9) {
			break
		}
		out = append(out, r)
	}
	return out
}

// Footprint is the most one run of b may hold: every measured result until
// the report is written, each scenario's synthetic body once, and a
// request's own prompt text, body and connection buffers for each request
// in flight.
func (c *Config) Footprint(b Burst) Footprint {
	var f Footprint
	scenarios := c.ScenariosOf(b)
	trace := b.Arrival.Process == ArrivalTrace
	perResult, perStream, turns := int64(0), int64(0), 1
	for _, s := range scenarios {
		perResult = max(perResult, s.resultBytes())
		perStream = max(perStream, s.streamBytes(trace))
		turns = max(turns, s.TurnsOf())
		f.Bytes += s.bodyBytes()
	}
	queued := int64(queuedBytes)
	if trace {
		queued += 8 * replay.MaxBlocks // a Mooncake record's hash ids ride with it
	}
	for _, rate := range b.Rates() {
		w, m := b.PlannedRequests(rate)
		// A conversation's arrival is a session of several requests.
		f.Requests += (w + m) * turns
		f.Measured += m * turns
		f.Bytes += int64(m)*perResult + int64(w+m)*queued
	}
	f.Bytes += int64(min(b.MaxConcurrency, f.Requests)) * perStream
	return f
}

// CanaryFootprint is what the canaries send and may hold at most: each
// schedule sends one request per interval, each in its own goroutine, so a
// target that hangs holds up to timeout/interval of them in flight.
func (c *Config) CanaryFootprint() (schedules int, rate float64, bytes int64) {
	for _, p := range c.CanaryPairs() {
		t, _ := c.Target(p.Target)
		s, _ := c.Scenario(p.Scenario)
		schedules++
		rate += float64(s.TurnsOf()) / p.Interval.Seconds() // a conversation's tick sends its every turn
		inFlight := int64(s.sessionSpan(t.Timeout.Std())/p.Interval) + 1
		bytes += inFlight*(s.streamBytes(false)+s.resultBytes()) + s.bodyBytes()
	}
	return schedules, rate, bytes
}

// resultBytes is the most one measured result of s holds.
func (s Scenario) resultBytes() int64 {
	r := resultBytes + bytesPerITL*int64(s.OutputTokens.Maximum())
	if s.Quality != nil {
		r += qualityKeepBytes
	}
	return r * int64(s.TurnsOf()) // a session's arrival keeps one per turn
}

// streamBytes is the most one request of s in flight holds: its own
// prompt text, request body and connection buffers. A synthetic prompt's
// own text is its shared prefix (or a trace's keyed prefix) and nonce; the
// rest is a slice of the scenario's body, which bodyBytes counts once.
func (s Scenario) streamBytes(trace bool) int64 {
	if s.PromptDataset != nil || s.Prompt != "" || s.Conversation != nil {
		// Held whole: a conversation's later turns carry its history.
		return streamBytes + bytesPerPrompt*int64(s.maxPromptTokens())
	}
	own := s.SharedPrefixTokens
	if trace {
		own = max(own, replay.MaxBlocks*replay.BlockTokens) // a Mooncake record's blocks
	}
	n := int64(s.maxPromptTokens())
	inline := min(MaxInlineBody, bytesPerWord*n) // a short prompt's body, one copy
	return streamBytes + inline + bytesPerWord*min(int64(own+nonceTokens), n)
}

// bodyBytes is the body every synthetic prompt of s ends with: made once
// per builder, that is per burst run and per canary schedule.
func (s Scenario) bodyBytes() int64 {
	if s.PromptDataset != nil || s.Prompt != "" {
		return 0
	}
	n := int64(s.PromptTokens.Maximum())
	return n*bytesPerWord + n/64*bodyMarkBytes
}

// maxPromptTokens is the longest prompt the scenario sends.
func (s Scenario) maxPromptTokens() int {
	if d := s.PromptDataset; d != nil {
		n := 0
		for _, p := range d.Prompts {
			n = max(n, p.Tokens)
		}
		return n + datasetNonceTokens
	}
	if s.Prompt != "" {
		return len(s.Prompt)/2 + 8 // a token is at least two bytes of text, mostly
	}
	return s.conversationTokens(s.PromptTokens.Maximum())
}

// UnmarshalYAML applies defaults.
func (l *Limits) UnmarshalYAML(unmarshal func(any) error) error {
	*l = DefaultLimits
	type plain Limits
	return unmarshal((*plain)(l))
}

// checkFootprints refuses scenarios and bursts past the limits.
func (c *Config) checkFootprints(errs *errList) {
	for i, s := range c.Scenarios {
		if d := s.PromptDataset; d != nil {
			if n := s.maxPromptTokens(); n > c.Limits.MaxPromptTokens {
				longest := slices.MaxFunc(d.Prompts, func(a, b DatasetPrompt) int { return a.Tokens - b.Tokens })
				errs.add(fmt.Sprintf("scenarios[%d].prompt_dataset.file", i), "the prompt at %s:%d is about %d tokens with its nonce line (estimated), past limits.max_prompt_tokens (%d): raise the limit or drop that conversation", d.File, longest.Line, n, c.Limits.MaxPromptTokens)
			}
			continue
		}
		if n := s.maxPromptTokens(); n > c.Limits.MaxPromptTokens {
			what := ""
			if cv := s.Conversation; cv != nil {
				what = fmt.Sprintf(" (turn %d of the conversation, with every earlier message and answer)", cv.Turns)
			}
			errs.add(fmt.Sprintf("scenarios[%d].prompt_tokens", i), "prompts of up to %d tokens%s are past limits.max_prompt_tokens (%d)", n, what, c.Limits.MaxPromptTokens)
		}
	}
	if n, rate, bytes := c.CanaryFootprint(); rate > c.Limits.MaxCanaryRate*(1+1e-9) {
		errs.add("canary", "%d schedules send %.4g requests per second, past limits.max_canary_rate (%g): lengthen intervals, pair fewer targets and scenarios, or raise the limit", n, rate, c.Limits.MaxCanaryRate)
	} else if bytes > int64(c.Limits.MaxCanaryMemory) {
		errs.add("canary", "%d schedules may hold up to %s with every target hanging to its timeout, past limits.max_canary_memory (%s): shorten timeouts or prompts, lengthen intervals, or raise the limit", n, humanBytes(bytes), humanBytes(int64(c.Limits.MaxCanaryMemory)))
	}
	for i, b := range c.Bursts {
		path := fmt.Sprintf("bursts[%d]", i)
		f := c.Footprint(b)
		if f.Requests > c.Limits.MaxPlannedRequests {
			errs.add(path, "plans up to %d requests per run, past limits.max_planned_requests (%d): lower its rate, duration or requests, or raise the limit", f.Requests, c.Limits.MaxPlannedRequests)
		} else if f.Bytes > int64(c.Limits.MaxBurstMemory) {
			errs.add(path, "may hold up to %s, past limits.max_burst_memory (%s): lower its rate, duration, max_concurrency or token lengths, or raise the limit", humanBytes(f.Bytes), humanBytes(int64(c.Limits.MaxBurstMemory)))
		}
	}
}

func (l *Limits) validate(errs *errList) {
	errs.intWithin("limits.max_planned_requests", l.MaxPlannedRequests, 1, maxPlannedCeiling, "requests")
	errs.intWithin("limits.max_prompt_tokens", l.MaxPromptTokens, 1, maxTokens, "tokens")
	if m := l.MaxBurstMemory; m < units.MiB || m > 64*units.GiB {
		errs.add("limits.max_burst_memory", "%s must be within [1MiB, 64GiB]", m)
	}
	errs.within("limits.max_canary_rate", l.MaxCanaryRate, 0.001, maxRate, "requests per second")
	if m := l.MaxCanaryMemory; m < units.MiB || m > 64*units.GiB {
		errs.add("limits.max_canary_memory", "%s must be within [1MiB, 64GiB]", m)
	}
}

// within adds an error unless v is a finite number in [lo, hi].
func (l *errList) within(path string, v, lo, hi float64, unit string) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < lo || v > hi {
		l.add(path, "%g must be within [%g, %g]%s", v, lo, hi, unitSuffix(unit))
		return false
	}
	return true
}

// above adds an error unless v is a finite number in (lo, hi].
func (l *errList) above(path string, v, lo, hi float64, unit string) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) || v <= lo || v > hi {
		l.add(path, "%g must be within (%g, %g]%s", v, lo, hi, unitSuffix(unit))
		return false
	}
	return true
}

func (l *errList) intWithin(path string, v, lo, hi int, unit string) bool {
	if v < lo || v > hi {
		l.add(path, "%d must be within [%d, %d]%s", v, lo, hi, unitSuffix(unit))
		return false
	}
	return true
}

// durationWithin adds an error unless d is in [lo, hi]; a zero d passes when
// optional, meaning the field is unset.
func (l *errList) durationWithin(path string, d Duration, lo, hi time.Duration, optional bool) bool {
	if optional && d == 0 {
		return true
	}
	if d.Std() < lo || d.Std() > hi {
		l.add(path, "%s must be within [%s, %s]", d, Duration(lo), Duration(hi))
		return false
	}
	return true
}

func unitSuffix(unit string) string {
	if unit == "" {
		return ""
	}
	return " " + unit
}
