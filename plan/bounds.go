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

// Requests bounds how many requests one run at rate plans: warmup and
// measured. A run whose random arrivals would bring more stops planning
// there, so the bound holds by construction.
func (b *Burst) Requests(rate float64) (warmup, measured int) {
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
	if s := b.Trace; b.Arrival.Process == config.ArrivalTrace && s != nil {
		return s.Warmup, s.Measured // the trace's own count, read at load
	}
	warmup = b.Warmup.Requests
	if b.Warmup.Duration > 0 {
		warmup = upTo(b.Warmup.Duration.Std())
	}
	measured = b.Burst.Requests
	if b.Duration > 0 {
		measured = upTo(b.Duration.Std())
	}
	return warmup, measured
}

// meanArrivals is how many arrivals a run at rate plans on average: a
// trace's own count, or the requests and durations at the mean rate.
func (b *Burst) meanArrivals(rate float64) int {
	if b.Trace != nil {
		w, m := b.Requests(rate) // the trace's own count
		return w + m
	}
	n := b.Warmup.Requests + b.Burst.Requests
	n += int(rate * (b.Warmup.Duration.Std() + b.Duration.Std()).Seconds())
	return n
}

// meanTurns is the requests an arrival of the mix sends on average: 1
// without conversations.
func (b *Burst) meanTurns() float64 {
	sum, weights := 0.0, 0.0
	for i, ws := range b.Scenarios {
		if i < len(b.Mix) {
			sum += ws.Weight * float64(b.Mix[i].TurnsOf())
			weights += ws.Weight
		}
	}
	if weights == 0 {
		return 1
	}
	return sum / weights
}

// planRates lists the rates one run sends at: a trace's own, the burst's,
// or its sweep's steps, lowest first.
func (b *Burst) planRates() []float64 {
	if s := b.Trace; b.Arrival.Process == config.ArrivalTrace && s != nil {
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

// footprint is the most one run may hold: every measured result until the
// report is written, each scenario's synthetic body once, and a request's
// own prompt text, body and connection buffers for each request in flight.
func (b *Burst) footprint(p *Plan) Footprint {
	var f Footprint
	trace := b.Arrival.Process == config.ArrivalTrace
	perResult, perStream, turns := int64(0), int64(0), 1
	scenarios := p.scenariosOf(b.Burst)
	for _, s := range scenarios {
		perResult = max(perResult, resultBytesOf(s.Scenario))
		perStream = max(perStream, streamBytesOf(s, trace))
		turns = max(turns, s.TurnsOf())
		f.Bytes += bodyBytes(s.Scenario)
	}
	queued := int64(queuedBytes)
	if trace {
		queued += 8 * replay.MaxBlocks // a Mooncake record's hash ids ride with it
	}
	for _, rate := range b.rates {
		w, m := b.Requests(rate)
		// A conversation's arrival is a session of several requests.
		f.Requests += (w + m) * turns
		f.Measured += m * turns
		f.Bytes += int64(m)*perResult + int64(w+m)*queued
	}
	if n := bisectSteps(b.Burst); n > 0 {
		// Each bisecting step runs below the top rate.
		w, m := b.Requests(b.Sweep.Auto.Max)
		f.Requests += n * (w + m) * turns
		f.Measured += n * m * turns
		f.Bytes += int64(n) * (int64(m)*perResult + int64(w+m)*queued)
	}
	f.Bytes += int64(min(b.MaxConcurrency, f.Requests))*perStream + encodeBytes(configScenarios(scenarios))
	return f
}

// scenariosOf is b's scenarios, as a burst's footprint counts each of them
// once.
func (p *Plan) scenariosOf(b config.Burst) []*Scenario {
	var out []*Scenario
	for _, s := range p.Config.ScenariosOf(b) {
		if ps, ok := p.Scenario(s.Name); ok {
			out = append(out, ps)
		}
	}
	return out
}

func configScenarios(scenarios []*Scenario) []config.Scenario {
	out := make([]config.Scenario, len(scenarios))
	for i, s := range scenarios {
		out[i] = s.Scenario
	}
	return out
}

// CanaryFootprint is what the canaries and comparisons send and may hold
// at most: each schedule sends one request (a comparison two) per
// interval, each in its own goroutine, so a target that hangs holds up to
// timeout/interval of them in flight.
func (p *Plan) CanaryFootprint() (schedules int, rate float64, bytes int64) {
	c := p.Config
	for _, pair := range c.CanaryPairs() {
		t, _ := c.Target(pair.Target)
		s, ok := p.Scenario(pair.Scenario)
		if !ok {
			continue
		}
		schedules++
		rate += float64(s.TurnsOf()) / pair.Interval.Seconds() // a conversation's tick sends its every turn
		inFlight := int64(sessionSpan(s.Scenario, t.Timeout.Std())/pair.Interval) + 1
		bytes += inFlight*(streamBytesOf(s, false)+resultBytesOf(s.Scenario)) + bodyBytes(s.Scenario)
	}
	// An always-on comparison's schedule sends a pair per tick, each side
	// hanging to its own target's timeout, and keeps its window's pairs.
	for _, pair := range c.ComparisonPairs() {
		s, ok := p.Scenario(pair.Scenario)
		if !ok {
			continue
		}
		schedules++
		rate += 2 / pair.Interval.Seconds()
		for _, name := range []string{pair.Comparison.Baseline, pair.Comparison.Candidate} {
			t, _ := c.Target(name)
			inFlight := int64(t.Timeout.Std()/pair.Interval) + 1
			bytes += inFlight * (streamBytesOf(s, false) + resultBytesOf(s.Scenario))
		}
		bytes += bodyBytes(s.Scenario) + int64(pair.Comparison.Window.Std()/pair.Interval+1)*comparisonPairBytes
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
func streamBytesOf(s *Scenario, trace bool) int64 {
	return promptBytesOf(s, trace) + imageBytes(s.Scenario) + wholeBytes(s.Scenario)
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
func promptBytesOf(s *Scenario, trace bool) int64 {
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
func maxPromptTokens(s *Scenario) int {
	if s.PromptDataset != nil {
		n := 0
		for _, p := range s.Source.Dataset {
			n = max(n, p.Tokens)
		}
		return n + datasetNonceTokens
	}
	if s.Golden != nil {
		return longestGolden(s.Source.Golden).Tokens + datasetNonceTokens
	}
	if s.Prompt != "" {
		return len(s.Prompt)/2 + 8 // a token is at least two bytes of text, mostly
	}
	return conversationTokens(s.Scenario, s.PromptTokens.Maximum())
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

// longestGolden is the line of the longest prompt (a zero line for none).
func longestGolden(lines []prompt.GoldenLine) prompt.GoldenLine {
	if len(lines) == 0 {
		return prompt.GoldenLine{}
	}
	return slices.MaxFunc(lines, func(a, b prompt.GoldenLine) int { return a.Tokens - b.Tokens })
}

// RunLength is about how long a run may last against a target of timeout:
// its sweep steps, then the timeout for the last requests in flight, once
// per repeat.
func (b *Burst) RunLength(timeout time.Duration) time.Duration {
	total := timeout // the last requests' in flight
	for _, rate := range b.rates {
		total += b.Warmup.Duration.Std() + b.Duration.Std()
		if rate > 0 {
			total += time.Duration(float64(b.Warmup.Requests+b.Burst.Requests) / rate * float64(time.Second))
		}
	}
	return total * time.Duration(max(b.Repeat, 1)) // each run of a repeat
}
