package burst

import (
	"errors"
	"io"
	"iter"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/replay"
	"github.com/llmprobe/llmprobe/report"
)

// traceStats counts, for the report, what a replay sent other than the
// trace says. The dispatcher and the workers both write it.
type traceStats struct {
	mu  sync.Mutex
	out report.TraceReplay
}

func (s *traceStats) add(f func(*report.TraceReplay)) {
	if s != nil {
		s.mu.Lock()
		f(&s.out)
		s.mu.Unlock()
	}
}

// readAhead is how many records a replay reads ahead of the dispatcher.
const readAhead = 1024

// tracePlan replays b's trace file: its offsets divided by the speedup and
// its lengths, cut by the burst's warmup and duration or requests. The file
// is read as the plan is drawn, a line at a time and at most readAhead
// records ahead, so the plan's memory does not grow with the file. A line that cannot be read is skipped
// and counted (the load refused any in the replayed part, so only a file
// changed since gets here); the scenario mix is drawn from the seed as for
// other processes.
func tracePlan(b config.Burst, stats *traceStats) iter.Seq[Arrival] {
	return func(yield func(Arrival) bool) {
		stats.add(func(o *report.TraceReplay) {
			o.File, o.Speedup = b.Arrival.File, b.Arrival.SpeedupOrOne()
		})
		r, err := replay.Open(b.Arrival.File, b.Arrival.Format)
		if err != nil {
			stats.add(func(o *report.TraceReplay) { o.Error = err.Error() })
			return
		}
		defer r.Close()
		stats.add(func(o *report.TraceReplay) { o.Format = r.Format() })
		read := func() (replay.Record, bool) {
			for {
				rec, err := r.Next()
				var le *replay.LineError
				switch {
				case err == nil:
					return rec, true
				case errors.As(err, &le):
					stats.add(func(o *report.TraceReplay) {
						o.SkippedLines++
						if o.Error == "" {
							o.Error = err.Error()
						}
					})
				default:
					if !errors.Is(err, io.EOF) {
						stats.add(func(o *report.TraceReplay) { o.Error = err.Error() })
					}
					return rec, false
				}
			}
		}
		// A reader goroutine keeps readAhead records ahead, so the file's
		// reads (a cold page cache, a slow disk) stay off the dispatcher's clock.
		recs, done := make(chan replay.Record, readAhead), make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(recs)
			for {
				rec, ok := read()
				if !ok {
					return
				}
				select {
				case recs <- rec:
				case <-done:
					return
				}
			}
		}()
		defer func() { close(done); wg.Wait() }()
		next := func() (replay.Record, bool) {
			rec, ok := <-recs
			return rec, ok
		}
		pick := picker(b, rand.New(rand.NewPCG(b.Seed, 0xa11)))
		maxWarmup, maxMeasured := b.PlannedRequests(0)
		if b.Arrival.Trace() == nil {
			maxWarmup, maxMeasured = math.MaxInt, math.MaxInt // not loaded: the file's own end
		}
		index := 0
		for x := range b.TraceCut(maxWarmup, maxMeasured).Arrivals(next) {
			a := Arrival{At: x.At, Scenario: pick(), Warmup: x.Warmup, Index: index,
				Input: clamp32(x.Input), Output: clamp32(x.Output)}
			if x.Blocks > 0 && x.Prefix >= 0 && x.Prefix < math.MaxInt64 {
				a.PrefixKey = x.Prefix + 1
			}
			index++
			if !yield(a) {
				return
			}
		}
	}
}

func clamp32(n int) int32 { return int32(min(max(n, 0), math.MaxInt32)) }

// MooncakeBlockTokens is the tokens one Mooncake hash id stands for.
const MooncakeBlockTokens = config.MooncakeBlockTokens

// traceLengths is what a trace arrival sends under scenario s: the trace's
// prompt and output lengths, each clamped to the scenario's maximum (what
// the configuration's memory check sized the burst for) and to at least 1,
// and the tokens of the shared first block.
func traceLengths(a Arrival, s config.Scenario, stats *traceStats) (prompt, output, prefix int) {
	prompt, output = int(a.Input), int(a.Output)
	maxPrompt, maxOutput := s.PromptTokens.Maximum(), s.OutputTokens.Maximum()
	if prompt > maxPrompt {
		prompt = maxPrompt
		stats.add(func(o *report.TraceReplay) { o.ClampedPrompt++ })
	}
	if output > maxOutput {
		output = maxOutput
		stats.add(func(o *report.TraceReplay) { o.ClampedOutput++ })
	}
	prompt, output = max(prompt, 1), max(output, 1)
	if a.PrefixKey != 0 {
		// The nonce and at least one token of the request's own follow it.
		prefix = min(MooncakeBlockTokens, prompt-5)
	}
	return prompt, output, max(prefix, 0)
}
