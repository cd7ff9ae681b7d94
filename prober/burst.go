package prober

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/config"
)

// BurstRun is one run of a burst at one rate.
type BurstRun struct {
	Burst     config.Burst
	Rate      float64
	Client    *Client
	Scenarios []config.Scenario // in the order of Burst.Scenarios
	Observer  Observer          // gets every measured result; may be nil
	InFlight  InFlight          // may be nil
	Progress  func(done, total int)
}

// BurstOutcome is what a run measured. Results hold the measured requests
// only, in arrival order; warmup requests were sent and left out.
type BurstOutcome struct {
	Rate       float64
	Start, End time.Time // the measured part: first measured arrival to last finish
	Planned    int       // measured requests planned
	Warmup     int
	// AllOutputTokens counts every successful request's tokens, warmup
	// included: the denominator of energy per token over the whole run.
	AllOutputTokens int
	Results         []*Result
	Aborted         bool
	AbortReason     string
}

// RunBurst sends the burst open loop: the whole schedule is drawn first, and
// each request is released at its planned time whatever happened to the ones
// before it. At most max_concurrency run at once; a released request waits
// in FIFO order for a slot, and the wait counts in its latency because
// latency counts from the planned time.
func RunBurst(ctx context.Context, run BurstRun) *BurstOutcome {
	b := run.Burst
	arrivals := PlanArrivals(b, run.Rate)
	builders := make([]*PromptBuilder, len(run.Scenarios))
	for i, s := range run.Scenarios {
		builders[i] = NewPromptBuilder(s, b.Seed+uint64(i))
	}
	reqs := make([]Request, len(arrivals))
	out := &BurstOutcome{Rate: run.Rate}
	for i, a := range arrivals {
		p, maxTokens := builders[a.Scenario].Next()
		reqs[i] = Request{Scenario: run.Scenarios[a.Scenario], Traffic: TrafficBurst, Prompt: p, MaxTokens: maxTokens}
		if a.Warmup {
			out.Warmup++
		} else {
			out.Planned++
		}
	}

	runCtx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	brake := newBrake(b.Brake, func(reason string) { abort(fmt.Errorf("%s", reason)) })
	target := run.Client.Target().Name

	results := make([]*Result, len(arrivals))
	queue := make(chan int, len(arrivals))
	var wg sync.WaitGroup
	var doneMu sync.Mutex
	done, allTokens := 0, 0
	for range min(b.MaxConcurrency, len(arrivals)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range queue {
				if runCtx.Err() != nil {
					continue // aborted: drain without sending
				}
				r := reqs[i]
				if run.InFlight != nil {
					run.InFlight.Started(target, r.Scenario.Name, TrafficBurst)
				}
				res := run.Client.Do(runCtx, r)
				if run.InFlight != nil {
					run.InFlight.Finished(target, r.Scenario.Name, TrafficBurst)
				}
				if runCtx.Err() != nil && res.Outcome != OutcomeSuccess {
					continue // cut by the brake, not by the target
				}
				brake.observe(res) // warmup too: the brake protects the target
				if res.Outcome == OutcomeSuccess {
					doneMu.Lock()
					allTokens += res.OutputTokens
					doneMu.Unlock()
				}
				if !arrivals[i].Warmup {
					results[i] = res
					if run.Observer != nil {
						run.Observer.Observe(res)
					}
				}
				if run.Progress != nil {
					doneMu.Lock()
					done++
					run.Progress(done, len(arrivals))
					doneMu.Unlock()
				}
			}
		}()
	}

	// The dispatcher releases every request whose time has come, then waits
	// for the next one: a timer for the bulk of the wait (the runtime's timers
	// wake up to a millisecond late), then yielding spins for the last stretch.
	start := time.Now().Add(20 * time.Millisecond)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
dispatch:
	for i := 0; i < len(arrivals); {
		due := start.Add(arrivals[i].At)
		if wait := time.Until(due) - spinWindow; wait > 0 {
			timer.Reset(wait)
			select {
			case <-runCtx.Done():
				break dispatch
			case <-timer.C:
			}
		}
		for time.Now().Before(due) {
			runtime.Gosched()
		}
		now := time.Now()
		for ; i < len(arrivals) && !start.Add(arrivals[i].At).After(now); i++ {
			reqs[i].Sched = start.Add(arrivals[i].At)
			reqs[i].Released = now
			queue <- i
		}
		if runCtx.Err() != nil {
			break
		}
	}
	close(queue)
	wg.Wait()
	out.AllOutputTokens = allTokens

	for i, r := range results {
		if r == nil {
			continue
		}
		if out.Start.IsZero() || reqs[i].Sched.Before(out.Start) {
			out.Start = reqs[i].Sched
		}
		if end := r.Sched.Add(r.E2E); end.After(out.End) {
			out.End = end
		}
		out.Results = append(out.Results, r)
	}
	if cause := context.Cause(runCtx); cause != nil && ctx.Err() == nil {
		out.Aborted, out.AbortReason = true, cause.Error()
	} else if ctx.Err() != nil {
		out.Aborted, out.AbortReason = true, "cancelled: "+ctx.Err().Error()
	}
	return out
}

// spinWindow is how long before a release the dispatcher stops sleeping.
const spinWindow = 1500 * time.Microsecond

// brake watches the measured results of a burst and stops it when, over the
// last window, the share of errors, rejects or SLO misses passes its maximum.
type brake struct {
	cfg    config.Brake
	stop   func(reason string)
	mu     sync.Mutex
	recent []brakeSample
	fired  bool
}

type brakeSample struct {
	at                     time.Time
	failed, rejected, miss bool
}

// minBrakeSamples keeps one unlucky request from stopping a burst.
const minBrakeSamples = 5

func newBrake(cfg config.Brake, stop func(string)) *brake { return &brake{cfg: cfg, stop: stop} }

func (b *brake) observe(r *Result) {
	if b.cfg.Window <= 0 {
		return
	}
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fired {
		return
	}
	b.recent = append(b.recent, brakeSample{
		at:       now,
		failed:   r.Outcome != OutcomeSuccess && r.Outcome != OutcomeRejected,
		rejected: r.Outcome == OutcomeRejected,
		miss:     !r.Good,
	})
	cut := 0
	for cut < len(b.recent) && now.Sub(b.recent[cut].at) > b.cfg.Window.Std() {
		cut++
	}
	b.recent = b.recent[cut:]
	if len(b.recent) < minBrakeSamples {
		return
	}
	var failed, rejected, miss int
	for _, s := range b.recent {
		if s.failed {
			failed++
		}
		if s.rejected {
			rejected++
		}
		if s.miss {
			miss++
		}
	}
	n := float64(len(b.recent))
	check := func(what string, count int, limit float64) {
		if b.fired || limit <= 0 || float64(count)/n <= limit {
			return
		}
		b.fired = true
		b.stop(fmt.Sprintf("safety brake: %s ratio %.2f over the last %s passed %.2f", what, float64(count)/n, b.cfg.Window, limit))
	}
	check("error", failed, b.cfg.MaxErrorRatio)
	check("reject", rejected, b.cfg.MaxRejectRatio)
	check("SLO-miss", miss, b.cfg.MaxSLOMissRatio)
}
