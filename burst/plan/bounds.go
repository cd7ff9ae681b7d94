package plan

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/prompt"
	"github.com/llmprobe/llmprobe/quality"
	"github.com/llmprobe/llmprobe/replay"
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
	queuedBytes      = 96 // a released request waiting for a slot, with a trace's lengths (and ids: BurstFootprint)
	qualityKeepBytes = 64 << 10

	datasetNonceTokens = 16 // the nonce line before a dataset's prompt, estimated generously
	// turnTemplateTokens is what a chat template adds around one message,
	// estimated generously (real templates add 3 to 8).
	turnTemplateTokens = 8
)

// Requests bounds how many requests one run of b at rate plans: warmup and
// measured. A run whose random arrivals would bring more stops planning
// there, so the bound holds by construction.
func Requests(b config.Burst, rate float64) (warmup, measured int) {
	upTo := func(d time.Duration) int {
		// The mean count plus six standard deviations of a renewal process
		// whose gaps have a squared coefficient of variation 1/burstiness.
		n := rate * d.Seconds()
		cv2 := 1.0
		switch b.Arrival.Process {
		case config.ArrivalConstant:
			cv2 = 0
		case config.ArrivalGamma:
			cv2 = 1 / b.Arrival.Burstiness
		}
		return int(math.Ceil(n + 6*math.Sqrt(n*cv2) + 1))
	}
	if s := b.Arrival.Trace; b.Arrival.Process == config.ArrivalTrace && s != nil {
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

// MeanArrivals is how many arrivals a run of b at rate plans on average:
// a trace's own count, or the requests and durations at the mean rate.
func MeanArrivals(b config.Burst, rate float64) int {
	if b.Arrival.Trace != nil {
		w, m := Requests(b, rate) // the trace's own count
		return w + m
	}
	n := b.Warmup.Requests + b.Requests
	n += int(rate * (b.Warmup.Duration.Std() + b.Duration.Std()).Seconds())
	return n
}

// MeanTurns is the requests an arrival of b's mix sends on average, its
// scenarios in the order of b.Scenarios: 1 without conversations.
func MeanTurns(b config.Burst, scenarios []config.Scenario) float64 {
	sum, weights := 0.0, 0.0
	for i, ws := range b.Scenarios {
		if i < len(scenarios) {
			sum += ws.Weight * float64(scenarios[i].TurnsOf())
			weights += ws.Weight
		}
	}
	if weights == 0 {
		return 1
	}
	return sum / weights
}

// Rates lists the rates one run of b sends at: its own, or its sweep's
// steps, lowest first.
func Rates(b config.Burst) []float64 {
	if s := b.Arrival.Trace; b.Arrival.Process == config.ArrivalTrace && s != nil {
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
	for i := 0; i <= config.MaxSweepSteps; i++ {
		r := a.Start + float64(i)*a.Step
		if r > a.Max*(1+1e-9) {
			break
		}
		out = append(out, r)
	}
	return out
}

// Footprint is what one run of a burst may hold at most.
type Footprint struct {
	Requests int   // planned, warmup and every sweep step included
	Measured int   // of which measured (results kept for the report)
	Bytes    int64 // worst-case memory
}

func (f Footprint) String() string {
	return fmt.Sprintf("at most %d planned requests (%d measured), worst-case memory %s", f.Requests, f.Measured, config.Bytes(f.Bytes))
}

// BurstFootprint is the most one run of b may hold: every measured result
// until the report is written, each scenario's synthetic body once, and a
// request's own prompt text, body and connection buffers for each request
// in flight.
func BurstFootprint(c *config.Config, b config.Burst) Footprint {
	var f Footprint
	trace := b.Arrival.Process == config.ArrivalTrace
	perResult, perStream, turns := int64(0), int64(0), 1
	for _, s := range c.ScenariosOf(b) {
		perResult = max(perResult, resultBytesOf(s))
		perStream = max(perStream, streamBytesOf(s, trace))
		turns = max(turns, s.TurnsOf())
		f.Bytes += bodyBytes(s)
	}
	queued := int64(queuedBytes)
	if trace {
		queued += 8 * replay.MaxBlocks // a Mooncake record's hash ids ride with it
	}
	for _, rate := range Rates(b) {
		w, m := Requests(b, rate)
		// A conversation's arrival is a session of several requests.
		f.Requests += (w + m) * turns
		f.Measured += m * turns
		f.Bytes += int64(m)*perResult + int64(w+m)*queued
	}
	if n := bisectSteps(b); n > 0 {
		// Each bisecting step runs below the top rate.
		w, m := Requests(b, b.Sweep.Auto.Max)
		f.Requests += n * (w + m) * turns
		f.Measured += n * m * turns
		f.Bytes += int64(n) * (int64(m)*perResult + int64(w+m)*queued)
	}
	f.Bytes += int64(min(b.MaxConcurrency, f.Requests))*perStream + encodeBytes(c.ScenariosOf(b))
	return f
}

// CanaryFootprint is what the canaries and comparisons send and may hold
// at most: each schedule sends one request (a comparison two) per
// interval, each in its own goroutine, so a target that hangs holds up to
// timeout/interval of them in flight.
func CanaryFootprint(c *config.Config) (schedules int, rate float64, bytes int64) {
	for _, p := range c.CanaryPairs() {
		t, _ := c.Target(p.Target)
		s, _ := c.Scenario(p.Scenario)
		schedules++
		rate += float64(s.TurnsOf()) / p.Interval.Seconds() // a conversation's tick sends its every turn
		inFlight := int64(sessionSpan(s, t.Timeout.Std())/p.Interval) + 1
		bytes += inFlight*(streamBytesOf(s, false)+resultBytesOf(s)) + bodyBytes(s)
	}
	// An always-on comparison's schedule sends a pair per tick, each side
	// hanging to its own target's timeout, and keeps its window's pairs.
	for _, p := range c.ComparisonPairs() {
		s, _ := c.Scenario(p.Scenario)
		schedules++
		rate += 2 / p.Interval.Seconds()
		for _, name := range []string{p.Comparison.Baseline, p.Comparison.Candidate} {
			t, _ := c.Target(name)
			inFlight := int64(t.Timeout.Std()/p.Interval) + 1
			bytes += inFlight * (streamBytesOf(s, false) + resultBytesOf(s))
		}
		bytes += bodyBytes(s) + int64(p.Comparison.Window.Std()/p.Interval+1)*comparisonPairBytes
	}
	return schedules, rate, bytes + encodeBytes(c.Scenarios)
}

// comparisonPairBytes is what a comparison's window keeps of one pair: a
// time and four figures a side.
const comparisonPairBytes = 96

// resultBytesOf is the most one measured result of s holds.
func resultBytesOf(s config.Scenario) int64 {
	r := resultBytes + bytesPerITL*int64(s.OutputTokens.Maximum())
	if s.ChecksAnswer() {
		r += qualityKeepBytes
	}
	if len(s.Tools) > 0 {
		r += quality.MaxArgumentBytes // the calls' arguments, kept to be checked
	}
	return r * int64(s.TurnsOf()) // a session's arrival keeps one per turn
}

// streamBytesOf is the most one request of s in flight holds: its own
// prompt text, request body and connection buffers, its images, and an
// unstreamed answer as it is read. A synthetic prompt's own text is its
// shared prefix (or a trace's keyed prefix) and nonce; the rest is a slice
// of the scenario's body, which bodyBytes counts once.
func streamBytesOf(s config.Scenario, trace bool) int64 {
	return promptBytesOf(s, trace) + imageBytes(s) + wholeBytes(s)
}

// imageBytes is what a request of s holds of its images in flight: their
// data URIs, which its body is sent from. Making them holds more for a
// moment, in a bounded number of encoders: encodeBytes.
func imageBytes(s config.Scenario) int64 {
	im := s.Images
	if im == nil {
		return 0
	}
	return int64(im.Count) * prompt.ImageSize(im.Width, im.Height)
}

// encodeBytes is what making the largest images of scenarios holds at
// most, whatever the requests in flight: images.MaxEncoders at once.
func encodeBytes(scenarios []config.Scenario) int64 {
	var n int64
	for _, s := range scenarios {
		if im := s.Images; im != nil {
			n = max(n, prompt.ImageEncodeBytes(im.Width, im.Height))
		}
	}
	return n
}

// wholeBytes is what an unstreamed answer of s holds while it is read: its
// body, at most openai.WholeLimit of its longest answer, which reading it
// whole may buffer twice over, and the texts decoded from it.
func wholeBytes(s config.Scenario) int64 {
	if s.Streamed() {
		return 0
	}
	return 3 * prober.WholeLimit(s.OutputTokens.Maximum())
}

// promptBytesOf is the prompt's part of streamBytesOf.
func promptBytesOf(s config.Scenario, trace bool) int64 {
	if s.PromptDataset != nil || s.Golden != nil || s.Prompt != "" || s.Conversation != nil {
		// Held whole: a conversation's later turns carry its history.
		return streamBytes + bytesPerPrompt*int64(maxPromptTokens(s))
	}
	own := s.SharedPrefixTokens
	if trace {
		own = max(own, replay.MaxBlocks*replay.BlockTokens) // a Mooncake record's blocks
	}
	n := int64(maxPromptTokens(s))
	inline := min(config.MaxInlineBody, bytesPerWord*n) // a short prompt's body, one copy
	return streamBytes + inline + bytesPerWord*min(int64(own+nonceTokens), n)
}

// bodyBytes is the body every synthetic prompt of s ends with: made once
// per builder, that is per burst run and per canary schedule.
func bodyBytes(s config.Scenario) int64 {
	if s.PromptDataset != nil || s.Golden != nil || s.Prompt != "" {
		return 0
	}
	n := int64(s.PromptTokens.Maximum())
	return n*bytesPerWord + n/64*bodyMarkBytes
}

// maxPromptTokens is the longest prompt the scenario sends.
func maxPromptTokens(s config.Scenario) int {
	if d := s.PromptDataset; d != nil {
		n := 0
		for _, p := range d.Prompts {
			n = max(n, p.Tokens)
		}
		return n + datasetNonceTokens
	}
	if g := s.Golden; g != nil {
		return longestGolden(g).Tokens + datasetNonceTokens
	}
	if s.Prompt != "" {
		return len(s.Prompt)/2 + 8 // a token is at least two bytes of text, mostly
	}
	return conversationTokens(s, s.PromptTokens.Maximum())
}

// conversationTokens is the longest prompt a session of s sends: its last
// turn, with every earlier message and answer.
func conversationTokens(s config.Scenario, first int) int {
	c := s.Conversation
	if c == nil {
		return first
	}
	later := c.FollowupTokens.Maximum() + s.OutputTokens.Maximum() + 2*turnTemplateTokens
	return first + (c.Turns-1)*later
}

// sessionSpan bounds how long one session of s lasts against a target with
// timeout: every turn to its timeout, and the think times between them.
func sessionSpan(s config.Scenario, timeout time.Duration) time.Duration {
	if s.Conversation == nil {
		return timeout
	}
	n := time.Duration(s.Conversation.Turns)
	return n*timeout + (n-1)*s.Conversation.ThinkTime.Std()
}

// CheckBounds is a config.Check: it refuses scenarios and bursts past the
// limits, once every field is in range (sizes mean nothing before).
func CheckBounds(c *config.Config, found []*config.FieldError) []*config.FieldError {
	if len(found) > 0 {
		return nil
	}
	var errs config.FieldErrors
	l := c.Limits
	for i, s := range c.Scenarios {
		n := maxPromptTokens(s)
		switch d := s.PromptDataset; {
		case n <= l.MaxPromptTokens:
		case d != nil:
			longest := slices.MaxFunc(d.Prompts, func(a, b config.DatasetPrompt) int { return a.Tokens - b.Tokens })
			errs.Add(fmt.Sprintf("scenarios[%d].prompt_dataset.file", i), "the prompt at %s:%d is about %d tokens with its nonce line (estimated), past limits.max_prompt_tokens (%d): raise the limit or drop that conversation", d.File, longest.Line, n, l.MaxPromptTokens)
		case s.Golden != nil:
			errs.Add(fmt.Sprintf("scenarios[%d].golden.file", i), "the prompt at %s:%d is about %d tokens with its nonce line (estimated), past limits.max_prompt_tokens (%d): raise the limit or shorten that line", s.Golden.File, longestGolden(s.Golden).Line, n, l.MaxPromptTokens)
		default:
			what := ""
			if cv := s.Conversation; cv != nil {
				what = fmt.Sprintf(" (turn %d of the conversation, with every earlier message and answer)", cv.Turns)
			}
			errs.Add(fmt.Sprintf("scenarios[%d].prompt_tokens", i), "prompts of up to %d tokens%s are past limits.max_prompt_tokens (%d)", n, what, l.MaxPromptTokens)
		}
	}
	if n, rate, bytes := CanaryFootprint(c); rate > l.MaxCanaryRate*(1+1e-9) {
		errs.Add("canary", "%d schedules send %.4g requests per second, past limits.max_canary_rate (%g): lengthen intervals, pair fewer targets and scenarios, or raise the limit", n, rate, l.MaxCanaryRate)
	} else if bytes > int64(l.MaxCanaryMemory) {
		errs.Add("canary", "%d schedules may hold up to %s with every target hanging to its timeout, past limits.max_canary_memory (%s): shorten timeouts, prompts or images, lengthen intervals, or raise the limit", n, config.Bytes(bytes), config.Bytes(int64(l.MaxCanaryMemory)))
	}
	for i, b := range c.Bursts {
		path := fmt.Sprintf("bursts[%d]", i)
		f := BurstFootprint(c, b)
		if f.Requests > l.MaxPlannedRequests {
			errs.Add(path, "plans up to %d requests per run, past limits.max_planned_requests (%d): lower its rate, duration or requests, or raise the limit", f.Requests, l.MaxPlannedRequests)
		} else if f.Bytes > int64(l.MaxBurstMemory) {
			errs.Add(path, "may hold up to %s, past limits.max_burst_memory (%s): lower its rate, duration, max_concurrency, token lengths or images, or raise the limit", config.Bytes(f.Bytes), config.Bytes(int64(l.MaxBurstMemory)))
		}
	}
	return errs
}

// longestGolden is g's line of the longest prompt (a zero line for none).
func longestGolden(g *config.Golden) config.GoldenLine {
	if len(g.Lines) == 0 {
		return config.GoldenLine{}
	}
	return slices.MaxFunc(g.Lines, func(a, b config.GoldenLine) int { return a.Tokens - b.Tokens })
}
