// Package burst runs scheduled open-loop bursts: the arrival plan, the
// runner with its concurrency cap and safety brake, rate sweeps, and the
// scheduler that starts each burst on time.
package burst

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/common/version"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/prompt"
	"github.com/llmprobe/llmprobe/report"
)

// Runner runs bursts against one target. The zero value of every field but
// Client is a working default.
type Runner struct {
	Client *prober.Client
	// Store holds the previous report, for the regression verdict, and keeps
	// the new one; nil keeps none.
	Store    *report.Store
	GPU      GPU             // nil where llmprobe runs without GPUs
	Observer prober.Observer // gets every measured result
	InFlight prober.InFlight
	Progress func(done, total int)
}

// GPU reads the node's GPUs around a burst.
type GPU interface {
	// BeginBurst starts; the returned function ends with the run's output
	// tokens and gives the GPU facts, or nil.
	BeginBurst() func(outputTokens int) *report.GPUFacts
}

// Run runs burst b (or its sweep) now, judges the report against the stored
// previous one, and saves it. scenarios are b's, in the order of
// b.Scenarios. The report comes back judged even when the error, which is
// about reading or writing the store, is not nil.
func (r Runner) Run(ctx context.Context, b config.Burst, scenarios []config.Scenario) (*report.Report, error) {
	info := r.Client.RefreshInfo(ctx)
	host, _ := os.Hostname()
	meta := report.Meta{Model: r.Client.Model(), Engine: info.Engine, EngineVersion: info.EngineVersion, Version: version.Version, Host: host, Scenarios: scenarios}
	var previous *report.Report
	var loadErr error
	if r.Store != nil {
		// Without the previous report the run still counts; it only lacks a regression verdict.
		if previous, loadErr = r.Store.Latest(b.Name); loadErr != nil {
			loadErr = fmt.Errorf("previous report of %s: %w", b.Name, loadErr)
		}
	}
	endGPU := func(int) *report.GPUFacts { return nil }
	if r.GPU != nil {
		endGPU = r.GPU.BeginBurst()
	}
	rep := r.measure(ctx, b, scenarios, meta)
	rep.GPU = endGPU(rep.AllOutputTokens)
	rep.Judge(previous)
	if r.Store != nil && ctx.Err() == nil {
		return rep, errors.Join(loadErr, r.Store.Save(rep, b.Keep))
	}
	return rep, loadErr
}

// measure runs the burst at its rate, or its sweep step by step, and builds
// the report.
func (r Runner) measure(ctx context.Context, b config.Burst, scenarios []config.Scenario, meta report.Meta) *report.Report {
	if b.Sweep == nil {
		return report.Build(b, r.runRate(ctx, b, scenarios, b.Arrival.Rate), meta)
	}
	sweep := report.NewSweep(b, meta)
	for _, rate := range sweepRates(b.Sweep) {
		if ctx.Err() != nil || !sweep.Add(r.runRate(ctx, b, scenarios, rate)) {
			break
		}
	}
	return sweep.Report()
}

// runRate sends the burst open loop at rate: the whole schedule is drawn
// first, and each request is released at its planned time whatever happened
// to the ones before it. At most max_concurrency run at once; a released
// request waits in FIFO order for a slot, and the wait counts in its latency
// because latency counts from the planned time.
func (r Runner) runRate(ctx context.Context, b config.Burst, scenarios []config.Scenario, rate float64) report.Run {
	arrivals := Plan(b, rate)
	builders := make([]*prompt.Builder, len(scenarios))
	for i, s := range scenarios {
		builders[i] = prompt.NewBuilder(s, b.Seed+uint64(i))
	}
	reqs := make([]prober.Request, len(arrivals))
	out := report.Run{Rate: rate}
	for i, a := range arrivals {
		p, maxTokens := builders[a.Scenario].Next()
		reqs[i] = prober.Request{Scenario: scenarios[a.Scenario], Traffic: prober.TrafficBurst, Prompt: p, MaxTokens: maxTokens}
		if a.Warmup {
			out.Warmup++
		} else {
			out.Planned++
		}
	}

	runCtx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	brake := newBrake(b.Brake, func(reason string) { abort(fmt.Errorf("%s", reason)) })
	target := r.Client.Target().Name

	results := make([]*prober.Result, len(arrivals))
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
				req := reqs[i]
				if r.InFlight != nil {
					r.InFlight.Started(target, req.Scenario.Name, prober.TrafficBurst)
				}
				res := r.Client.Do(runCtx, req)
				if r.InFlight != nil {
					r.InFlight.Finished(target, req.Scenario.Name, prober.TrafficBurst)
				}
				if runCtx.Err() != nil && res.Outcome != prober.OutcomeSuccess {
					continue // cut by the brake, not by the target
				}
				brake.observe(res) // warmup too: the brake protects the target
				if res.Outcome == prober.OutcomeSuccess {
					doneMu.Lock()
					allTokens += res.OutputTokens
					doneMu.Unlock()
				}
				if !arrivals[i].Warmup {
					results[i] = res
					if r.Observer != nil {
						r.Observer.Observe(res)
					}
				}
				if r.Progress != nil {
					doneMu.Lock()
					done++
					r.Progress(done, len(arrivals))
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

	for i, res := range results {
		if res == nil {
			continue
		}
		if out.Start.IsZero() || reqs[i].Sched.Before(out.Start) {
			out.Start = reqs[i].Sched
		}
		if end := res.Sched.Add(res.E2E); end.After(out.End) {
			out.End = end
		}
		out.Results = append(out.Results, res)
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
