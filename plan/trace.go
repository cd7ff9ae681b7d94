package plan

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/replay"
)

// A Replay hears, for the report, what a trace plan reads besides the
// arrivals it yields (what it replays, each line it skips, why it stopped
// before the file's end) and which of an arrival's lengths TraceLengths
// clamped.
type Replay interface {
	// Replaying comes first: the format is "" when the file cannot be opened.
	Replaying(file, format string, speedup float64)
	Skipped(line error)
	Stopped(err error)
	Clamped(prompt, output bool)
}

// readAhead is how many records a replay reads ahead of the dispatcher.
const readAhead = 1024

// tracePlan replays b's trace file: its offsets divided by the speedup and
// its lengths, cut by the burst's warmup and duration or requests. The file
// is read as the plan is drawn, a line at a time and at most readAhead
// records ahead, so the plan's memory does not grow with the file. A line
// that cannot be read is skipped and told (the load refused any in the
// replayed part, so only a file changed since gets here); the scenario mix
// is drawn from the seed as for other processes.
func (b *Burst) tracePlan(events Replay) iter.Seq[Arrival] {
	if events == nil {
		events = quiet{}
	}
	return func(yield func(Arrival) bool) {
		speedup := cmp.Or(b.Arrival.Speedup, 1)
		r, err := replay.Open(b.Arrival.File, b.Arrival.Format)
		if err != nil {
			events.Replaying(b.Arrival.File, "", speedup)
			events.Stopped(err)
			return
		}
		defer r.Close()
		events.Replaying(b.Arrival.File, r.Format(), speedup)
		read := func() (replay.Record, bool) {
			for {
				rec, err := r.Next()
				var le *replay.LineError
				switch {
				case err == nil:
					return rec, true
				case errors.As(err, &le):
					events.Skipped(err)
				default:
					if !errors.Is(err, io.EOF) {
						events.Stopped(err)
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
		pick := picker(b.Burst, rand.New(rand.NewPCG(b.Seed, 0xa11)))
		maxWarmup, maxMeasured := b.Requests(0)
		if b.Trace == nil {
			maxWarmup, maxMeasured = math.MaxInt, math.MaxInt // not loaded: the file's own end
		}
		index := 0
		for x := range traceCut(b.Burst, maxWarmup, maxMeasured).Arrivals(next) {
			a := Arrival{At: x.At, Scenario: pick(), Warmup: x.Warmup, Index: index,
				Input: clamp32(x.Input), Output: clamp32(x.Output)}
			if len(x.Blocks) > 0 {
				a.Blocks = packBlocks(x.Blocks)
			}
			index++
			if !yield(a) {
				return
			}
		}
	}
}

// quiet is a Replay that tells no one.
type quiet struct{}

func (quiet) Replaying(string, string, float64) {}
func (quiet) Skipped(error)                     {}
func (quiet) Stopped(error)                     {}
func (quiet) Clamped(bool, bool)                {}

// TraceLengths is what trace arrival a sends under its scenario: the
// trace's prompt and output lengths, each clamped to the scenario's maximum
// (what the bounds sized the burst for) and to at least 1, and the tokens
// of its shared blocks; a clamp is told to events, if not nil.
func (b *Burst) TraceLengths(a Arrival, events Replay) (prompt, output, prefix int) {
	s := b.Mix[a.Scenario]
	prompt, output = int(a.Input), int(a.Output)
	maxPrompt, maxOutput := s.PromptTokens.Maximum(), s.OutputTokens.Maximum()
	clampedPrompt, clampedOutput := prompt > maxPrompt, output > maxOutput
	if clampedPrompt {
		prompt = maxPrompt
	}
	if clampedOutput {
		output = maxOutput
	}
	if (clampedPrompt || clampedOutput) && events != nil {
		events.Clamped(clampedPrompt, clampedOutput)
	}
	prompt, output = max(prompt, 1), max(output, 1)
	if n := len(a.Blocks) / 8; n > 0 {
		// The nonce and at least one token of the request's own follow them.
		prefix = min(n*replay.BlockTokens, prompt-5)
	}
	return prompt, output, max(prefix, 0)
}

func clamp32(n int) int32 { return int32(min(max(n, 0), math.MaxInt32)) }

// traceCut is how a burst's bounds cut its trace: warmup first, then the
// measured part, each by requests or by duration after speedup, as for
// other processes; maxWarmup and maxMeasured stop either part.
func traceCut(b config.Burst, maxWarmup, maxMeasured int) replay.Cut {
	return replay.Cut{
		Speedup:        b.Arrival.Speedup,
		WarmupRequests: b.Warmup.Requests, WarmupDuration: b.Warmup.Duration.Std(), MaxWarmup: maxWarmup,
		Requests: b.Requests, Duration: b.Duration.Std(), MaxMeasured: maxMeasured,
	}
}

// scanTrace reads the part of b's trace that b replays, at most limit
// records of each part, and fails on the first line that cannot be read.
// Memory stays one line whatever the file's size.
func scanTrace(b config.Burst, limit int) (*TraceScan, error) {
	r, err := replay.Open(b.Arrival.File, b.Arrival.Format)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var readErr error
	next := func() (replay.Record, bool) {
		rec, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				readErr = err
			}
			return rec, false
		}
		return rec, true
	}
	scan := &TraceScan{Format: r.Format()}
	var first, last time.Duration
	for x := range traceCut(b, limit, limit).Arrivals(next) {
		if scan.Warmup+scan.Measured == 0 {
			first = x.At
		}
		last = x.At
		if x.Warmup {
			scan.Warmup++
		} else {
			scan.Measured++
		}
	}
	if readErr != nil {
		return nil, readErr
	}
	scan.Span = last - first
	n := scan.Warmup + scan.Measured
	if scan.Span > 0 {
		scan.Rate = float64(n-1) / scan.Span.Seconds()
	} else {
		scan.Rate = config.MaxRate // every record at once
	}
	return scan, nil
}

// scanTraces reads the part of each trace burst's file the burst replays,
// by the burst's name, so that a bad line fails the load with its line
// number; the scan's count is the burst's planned-request bound. A burst
// whose file, format or speedup config refused is skipped.
func scanTraces(c *config.Config, found []*config.FieldError) (map[string]*TraceScan, config.FieldErrors) {
	var errs config.FieldErrors
	out := map[string]*TraceScan{}
	limit := c.Limits.MaxPlannedRequests
	if limit <= 0 || limit > config.MaxPlannedCeiling {
		limit = config.MaxPlannedCeiling
	}
	for i, b := range c.Bursts {
		p := fmt.Sprintf("bursts[%d].arrival", i)
		if b.Arrival.Process != config.ArrivalTrace || slices.ContainsFunc(found, func(fe *config.FieldError) bool {
			return fe.Path == p+".file" || fe.Path == p+".format" || fe.Path == p+".speedup"
		}) {
			continue
		}
		scan, err := scanTrace(b, limit+1)
		switch {
		case err != nil:
			errs.Add(p+".file", "%s", err)
		case scan.Warmup+scan.Measured == 0:
			errs.Add(p+".file", "%s holds no records", b.Arrival.File)
		default:
			out[b.Name] = scan
		}
	}
	return out, errs
}

// TraceScan is the part of a trace a burst replays, as read when the
// configuration was compiled: every line of it parsed, none held.
type TraceScan struct {
	Format           string
	Warmup, Measured int           // records in each part
	Span             time.Duration // first to last replayed arrival, after speedup
	Rate             float64       // mean arrivals per second of the replayed part
}
