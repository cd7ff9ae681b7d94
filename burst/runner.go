// Package burst runs scheduled open-loop bursts: the
// runner with its concurrency cap and safety brake, rate sweeps, and the
// scheduler that starts each burst on time.
package burst

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/common/version"

	"github.com/llmprobe/llmprobe/burst/plan"
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/enginemetrics"
	"github.com/llmprobe/llmprobe/internal/clock"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/prompt"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/shard"
)

// Runner runs bursts against one target. The zero value of every field but
// Client is a working default.
type Runner struct {
	Client *prober.Client
	// Store holds the previous report, for the regression verdict, and keeps
	// the new one; nil keeps none.
	Store *report.Store
	// Baseline, when set, is compared with instead of the previous report.
	Baseline *report.Report
	GPU      GPU             // nil where llmprobe runs without GPUs
	Observer prober.Observer // gets every measured result
	InFlight prober.InFlight
	Progress func(done, total int)
	// Overrides, recorded in the report, say how the run differs from the configuration.
	Overrides []string
	// Shard, when its Count is above 1, runs only this replica's share of
	// the burst (plan.Share); max_concurrency and the brake then apply to the
	// share alone. Start is the instant the plan's offsets count from, the
	// same in every shard so that their shares make up one schedule; zero
	// starts now. Neither goes with a sweep.
	Shard shard.Shard
	Start time.Time

	// From, when set, makes the run the upgrade run of an engine change
	// from these facts: it is compared with the burst's last report from
	// them, and a significant change above MaxIncrease is a regression.
	From        *report.Facts
	MaxIncrease float64
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
	// The target's facts are read beside the burst: a target that hangs must
	// not hold the burst back by the info call's timeout.
	infoDone := make(chan prober.TargetInfo, 1)
	go func() { infoDone <- r.Client.RefreshInfo(ctx) }()
	host, _ := os.Hostname()
	meta := report.Meta{Version: version.Version, Host: host, Scenarios: scenarios}
	previous, noBaseline, loadErr := r.baseline(b.Name)
	endGPU := func(int) *report.GPUFacts { return nil }
	if r.GPU != nil {
		endGPU = r.GPU.BeginBurst()
	}
	rep := r.measure(ctx, b, scenarios, meta)
	rep.GPU = endGPU(rep.AllOutputTokens)
	info := <-infoDone // the model too, where it was discovered
	rep.Model, rep.Engine, rep.EngineVersion = r.Client.Model(), info.Engine, info.EngineVersion
	rep.RegressionSkipped = noBaseline
	rep.Overrides = r.Overrides
	if em := r.Client.Target().EngineMetrics; em != nil {
		rep.AttachEngineMetrics(enginemetrics.Options{Family: em.Family, Engine: info.Engine, Model: rep.Model})
	}
	if r.From != nil {
		rep.ExpectUpgrade(*r.From, r.MaxIncrease)
	}
	rep.Judge(previous)
	if r.Store != nil {
		// Saved even when the burst was cut short: a stopped burst is a result.
		return rep, errors.Join(loadErr, r.Store.Save(rep, b.Keep))
	}
	return rep, loadErr
}

// baseline is the report to compare with: the chosen one, else the stored
// previous one of the burst. Without one it says why; without the previous
// report the run still counts, it only lacks a regression verdict.
func (r Runner) baseline(burst string) (*report.Report, string, error) {
	switch {
	case r.Baseline != nil:
		return r.Baseline, "", nil
	case r.Store == nil:
		return nil, "no report store to find a previous report in", nil
	case r.From != nil:
		prev, err := r.Store.LatestFrom(burst, *r.From)
		if err != nil {
			return nil, "the reports from before the engine change cannot be read: " + err.Error(), fmt.Errorf("reports of %s from %s: %w", burst, r.From, err)
		}
		if prev == nil {
			return nil, fmt.Sprintf("no report of burst %s from %s, before the change, to compare with", burst, r.From), nil
		}
		return prev, "", nil
	}
	prev, err := r.Store.Latest(burst)
	if err != nil {
		return nil, "the previous report cannot be read: " + err.Error(), fmt.Errorf("previous report of %s: %w", burst, err)
	}
	if prev == nil {
		return nil, "no previous report of burst " + burst, nil
	}
	return prev, "", nil
}

// measure runs the burst at its rate, or its sweep step by step, and builds
// the report.
func (r Runner) measure(ctx context.Context, b config.Burst, scenarios []config.Scenario, meta report.Meta) *report.Report {
	eng := r.engine(ctx)
	if b.Sweep == nil {
		run := eng.around(ctx, func() report.Run { return r.runMeasured(ctx, b, scenarios, plan.Rates(b)[0]) })
		run.Shard, run.Origin = r.Shard, r.Start
		if run.Origin.IsZero() {
			run.Origin = run.Start // a shard needs a shared Start to be merged; never year 1
		}
		return report.Build(b, run, meta)
	}
	sweep := report.NewSweep(b, meta)
	for _, rate := range plan.Rates(b) {
		if ctx.Err() != nil || !sweep.Add(eng.around(ctx, func() report.Run { return r.runMeasured(ctx, b, scenarios, rate) })) {
			break
		}
	}
	return sweep.Report()
}

// engineReads reads the engine's metrics page around each run; the page
// after one run is the page before the next (a sweep's steps).
type engineReads struct {
	scraper *enginemetrics.Scraper
	last    *enginemetrics.Page
}

// engine reads the page before the first run, where the target names one.
// A page that cannot be read never stops the burst: it carries its reason
// into the report.
func (r Runner) engine(ctx context.Context) *engineReads {
	t := r.Client.Target()
	if t.EngineMetrics == nil {
		return nil
	}
	s := &enginemetrics.Scraper{Client: r.Client.HTTPClient(), URL: enginemetrics.URL(t), Timeout: t.EngineMetrics.Timeout.Std(), Redact: r.Client.Redact}
	before := *s
	if !r.Start.IsZero() {
		// A shard starts at a fixed instant: the read must not make it late.
		before.Timeout = min(before.Timeout, time.Until(r.Start.Add(-50*time.Millisecond)))
		if before.Timeout <= 0 {
			return &engineReads{scraper: s, last: &enginemetrics.Page{Time: time.Now().UTC(), Error: "not read: no time left before the shard's fixed start"}}
		}
	}
	return &engineReads{scraper: s, last: before.Scrape(ctx)}
}

// around runs one run and reads the page after it, even when ctx ended:
// a stopped burst's report still gets the engine's view of what it sent.
func (e *engineReads) around(ctx context.Context, run func() report.Run) report.Run {
	out := run()
	if e == nil {
		return out
	}
	after := e.scraper.Scrape(context.WithoutCancel(ctx))
	out.Engine = &report.EngineScrapes{URL: e.scraper.URL, Before: e.last, After: after}
	e.last = after
	return out
}

// runMeasured runs one rate with the client's own delays sampled around
// it, for the report's error bound.
func (r Runner) runMeasured(ctx context.Context, b config.Burst, scenarios []config.Scenario, rate float64) report.Run {
	self := startSelfMeasure()
	run := r.runRate(ctx, b, scenarios, rate)
	run.Runtime = self.done()
	return run
}

// runRate sends the burst open loop at rate: arrivals are drawn one at a
// time from the seeded plan, and each request is released at its planned
// time whatever happened to the ones before it. At most max_concurrency run
// at once; a released request waits in FIFO order for a slot, and the wait
// counts in its latency because latency counts from the planned time. Its
// prompt is built when it takes its slot, so waiting requests hold no prompt
// and memory stays within the burst's checked footprint.
//
// Every planned request ends up in the run: sent, with its outcome, or not
// sent, with the reason. The safety brake stops the sending; requests in
// flight then run to their own deadline and count, so a hang is a timeout,
// never a gap. When ctx ends (shutdown, a reload that removed the burst),
// requests in flight are cancelled and count as cancelled.
func (r Runner) runRate(ctx context.Context, b config.Burst, scenarios []config.Scenario, rate float64) report.Run {
	builders := make([]*prompt.Builder, len(scenarios))
	for i, s := range scenarios {
		builders[i] = prompt.NewBuilder(s, b.Seed+uint64(i))
	}
	out := report.Run{Rate: rate, NotSent: map[string]int{}}
	maxWarmup, maxMeasured := plan.Requests(b, rate)
	var trace *traceStats
	if b.Arrival.Process == config.ArrivalTrace {
		trace = &traceStats{}
	}

	// sending stops with the brake or ctx; requests in flight end with ctx only.
	sending, stopSending := context.WithCancelCause(ctx)
	defer stopSending(nil)
	// A shard's brake sees its own share: sized to the rate that share arrives at.
	shares := max(1, r.Shard.Count)
	brake := newBrake(b.Brake, rate/float64(shares), func(reason string) { stopSending(errors.New(reason)) })
	target := r.Client.Target().Name

	type job struct {
		n        int // the arrival's place in the plan
		arrival  plan.Arrival
		released time.Time
	}
	type measured struct {
		n   int
		res *prober.Result
	}
	var results []measured
	// Sized to the plan's bound: the dispatcher never blocks on a slow target.
	queue := make(chan job, maxWarmup+maxMeasured)
	var wg sync.WaitGroup
	var mu sync.Mutex
	// total is what progress counts to: the plan's expected size until it
	// turns out larger.
	done, allTokens, total := 0, 0, int(float64(plan.MeanArrivals(b, rate)/shares)*plan.MeanTurns(b, scenarios))
	notSent := func(a plan.Arrival) {
		if !a.Warmup {
			mu.Lock()
			out.NotSent[stopReason(sending)] += scenarios[a.Scenario].TurnsOf()
			mu.Unlock()
		}
	}
	start := r.Start
	if start.IsZero() {
		start = time.Now().Add(20 * time.Millisecond)
	}
	// Workers start as the load needs them, up to max_concurrency: an idle
	// pool of that size would hold its stacks for nothing. free is idle
	// workers minus released requests none has taken yet.
	var free atomic.Int64
	workers, maxWorkers := 0, min(b.MaxConcurrency, cap(queue))
	// send sends one request of arrival j; id tells the brake its requests apart.
	send := func(id int, req prober.Request) *prober.Result {
		if t := tightest(req.Scenario); t > 0 {
			brake.started(id, req.Sched.Add(t))
		}
		if r.InFlight != nil {
			r.InFlight.Started(target, req.Scenario.Name, prober.TrafficBurst)
		}
		res := r.Client.Do(ctx, req)
		if r.InFlight != nil {
			r.InFlight.Finished(target, req.Scenario.Name, prober.TrafficBurst)
		}
		brake.finished(id, res)
		return res
	}
	record := func(j job, res *prober.Result) {
		mu.Lock()
		if res.Outcome == prober.OutcomeSuccess {
			allTokens += res.OutputTokens
		}
		if !j.arrival.Warmup {
			results = append(results, measured{j.n, res})
		}
		done++
		if r.Progress != nil {
			r.Progress(done, total)
		}
		mu.Unlock()
		if !j.arrival.Warmup && r.Observer != nil {
			r.Observer.Observe(res)
		}
	}
	handle := func(j job) {
		if sending.Err() != nil {
			notSent(j.arrival) // stopped while it waited for the concurrency cap
			return
		}
		sc := scenarios[j.arrival.Scenario]
		req := prober.Request{Scenario: sc, Traffic: prober.TrafficBurst, Sched: start.Add(j.arrival.At), Released: j.released}
		if sc.Conversation != nil {
			// The arrival is a session: its turns run here, one after another.
			// Negative brake ids never meet an arrival's own.
			sendTurn := func(req prober.Request) *prober.Result {
				return send(-(j.n*config.MaxTurns + req.Prompt.Turn), req)
			}
			left, why := prober.Converse(sending, req, builders[j.arrival.Scenario].Session(uint64(j.n)), sendTurn, func(res *prober.Result) { record(j, res) })
			if left > 0 && !j.arrival.Warmup {
				if why == "" {
					why = stopReason(sending)
				}
				mu.Lock()
				out.NotSent[why] += left
				mu.Unlock()
			}
			return
		}
		req.Prompt, req.MaxTokens = builders[j.arrival.Scenario].At(uint64(j.n))
		if trace != nil {
			tokens, output, prefix := plan.TraceLengths(j.arrival, sc, trace)
			req.Prompt, req.MaxTokens = builders[j.arrival.Scenario].Sized(uint64(j.n), tokens, j.arrival.BlockIDs(), prefix), output
		}
		record(j, send(j.n, req))
	}
	worker := func() {
		defer wg.Done()
		for j := range queue {
			handle(j)
			free.Add(1)
		}
	}
	release := func(j job) {
		if free.Add(-1) < 0 && workers < maxWorkers {
			free.Add(1) // the new worker takes this one
			workers++
			wg.Add(1)
			go worker()
		}
		queue <- j
	}
	ticking := make(chan struct{})
	tickDone := make(chan struct{})
	go func() {
		defer close(tickDone)
		if !brake.enabled() {
			return
		}
		tick := time.NewTicker(brake.tickEvery())
		defer tick.Stop()
		for {
			select {
			case <-ticking:
				return
			case <-tick.C:
				brake.tick()
			}
		}
	}()

	// The dispatcher releases every request whose time has come, then waits
	// for the next one on its own precise clock.
	out.ID = report.NewID(b.Name, start)
	// The dispatcher keeps its thread, whose timer slack PreciseThread cuts
	// to a nanosecond for the run.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer clock.PreciseThread()()
	timer := clock.NewTimer()
	defer timer.Stop()
	n, requests := 0, 0
	for a := range plan.Share(b, rate, r.Shard, trace) {
		turns := scenarios[a.Scenario].TurnsOf() // a conversation's arrival plans all its turns
		if a.Warmup {
			out.Warmup += turns
		} else {
			out.Planned += turns
		}
		requests += turns
		mu.Lock()
		total = max(total, requests)
		mu.Unlock()
		if clock.Until(sending, start.Add(a.At), timer) {
			release(job{n: a.Index, arrival: a, released: time.Now()})
		} else {
			notSent(a) // never released
		}
		n++
	}
	close(queue)
	wg.Wait()
	close(ticking)
	<-tickDone
	if context.Cause(sending) != nil {
		out.Aborted, out.AbortReason = true, stopReason(sending)
	}

	out.AllOutputTokens = allTokens
	if trace != nil {
		trace.out.Records = n  // this shard's share
		out.Trace = &trace.out // every writer is done
	}
	slices.SortFunc(results, func(x, y measured) int { return cmp.Or(x.n-y.n, x.res.Turn-y.res.Turn) })
	for _, m := range results {
		out.Add(m.n, m.res)
	}
	out.Close(start)
	return out
}

// stopReason says why sending stopped: the brake's verdict, or why ctx ended.
func stopReason(sending context.Context) string {
	cause := context.Cause(sending)
	if cause == nil || errors.Is(cause, context.Canceled) {
		return "cancelled"
	}
	return cause.Error()
}
