package burst

import (
	"context"
	"errors"
	"iter"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/lib/clock"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/prompt"
	"github.com/llmprobe/llmprobe/report"
)

// job is an arrival released to the workers, and when it was.
type job struct {
	arrival  plan.Arrival
	released time.Time
}

// dispatcher sends one rate of a burst open loop, as runRate describes.
// One goroutine walks the plan and releases each arrival at its time;
// workers, started as the load needs them up to max_concurrency, send
// what it released. The run's tallies, which both write, are under mu.
type dispatcher struct {
	r        Runner
	burst    *plan.Burst
	builders []*prompt.Builder
	trace    *traceStats // nil unless the burst replays a trace
	target   string
	start    time.Time // the plan's offsets count from here
	// ctx ends the requests in flight; sending, which the brake also
	// ends, stops the sending. Both live as long as the run.
	ctx         context.Context
	sending     context.Context
	stopSending context.CancelCauseFunc
	brake       *brake

	// queue is sized to the plan's bound: releasing never blocks on a
	// slow target.
	queue chan job
	wg    sync.WaitGroup
	// free is idle workers minus released jobs none has taken yet.
	free       atomic.Int64
	maxWorkers int
	// Only the dispatching goroutine touches these, so releasing takes no
	// lock a worker holds.
	workers         int
	arrivals        int // drawn from the plan: this shard's share
	requests        int // planned so far, every turn and warmup included
	planned, warmup int // of requests: measured and warmup
	// total is what progress counts to: the expected size until the plan
	// turns out larger.
	total atomic.Int64

	mu        sync.Mutex
	out       report.Run // NotSent and the measured results so far
	done      int        // requests sent and answered, for progress
	allTokens int
}

// newDispatcher readies a run of b at rate; it sends nothing yet.
func newDispatcher(ctx context.Context, r Runner, b *plan.Burst, rate float64) *dispatcher {
	d := &dispatcher{r: r, burst: b, target: r.Client.Target().Name, ctx: ctx}
	d.builders = make([]*prompt.Builder, len(b.Mix))
	for i, s := range b.Mix {
		d.builders[i] = s.Builder(b.Seed + uint64(i))
		d.builders[i].Salt = r.Salt
	}
	if b.Arrival.Process == config.ArrivalTrace {
		d.trace = &traceStats{}
	}
	d.sending, d.stopSending = context.WithCancelCause(ctx)
	// A shard's brake sees its own share: sized to the rate that share arrives at.
	shares := max(1, r.Shard.Count)
	d.brake = newBrake(b.Brake, rate/float64(shares), func(reason string) { d.stopSending(errors.New(reason)) })
	maxWarmup, maxMeasured := b.Requests(rate)
	d.queue = make(chan job, maxWarmup+maxMeasured)
	d.maxWorkers = min(b.MaxConcurrency, cap(d.queue))
	d.total.Store(int64(b.Planned(rate, r.Shard)))
	d.start = r.Start
	if d.start.IsZero() {
		d.start = time.Now().Add(20 * time.Millisecond)
	}
	d.out = report.Run{ID: report.NewID(b.Name, d.start), Rate: rate, NotSent: map[string]int{}}
	return d
}

// run sends plan and gives what it measured.
func (d *dispatcher) run(arrivals iter.Seq[plan.Arrival]) report.Run {
	defer d.stopSending(nil)
	stopTicks := d.tickBrake()
	d.dispatch(arrivals)
	d.drain(stopTicks)
	return d.result()
}

// tickBrake ticks the brake while the run lasts, so that requests in
// flight past their objective count before they end; the returned function
// stops the ticks.
func (d *dispatcher) tickBrake() (stop func()) {
	if !d.brake.enabled() {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(d.brake.tickEvery())
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
				d.brake.tick()
			}
		}
	}()
	return func() { close(quit); <-done }
}

// dispatch draws the plan one arrival at a time and releases each at its
// time.
func (d *dispatcher) dispatch(arrivals iter.Seq[plan.Arrival]) {
	pacer := clock.NewPacer()
	defer pacer.Close()
	for a := range arrivals {
		d.count(a)
		d.releaseAt(a, pacer)
	}
}

// count adds arrival a to the plan's tallies: a conversation's arrival
// plans all its turns.
func (d *dispatcher) count(a plan.Arrival) {
	turns := d.burst.Mix[a.Scenario].TurnsOf()
	d.arrivals++
	d.requests += turns
	if a.Warmup {
		d.warmup += turns
	} else {
		d.planned += turns
	}
	if int64(d.requests) > d.total.Load() {
		d.total.Store(int64(d.requests))
	}
}

// releaseAt waits until a is due and releases it; when sending stops
// first, a is never sent.
func (d *dispatcher) releaseAt(a plan.Arrival, pacer *clock.Pacer) {
	if !pacer.Until(d.sending, d.start.Add(a.At)) {
		d.notSent(a, d.burst.Mix[a.Scenario].TurnsOf(), stopReason(d.sending))
		return
	}
	if d.r.releaseLate > 0 {
		time.Sleep(d.r.releaseLate)
	}
	d.release(job{arrival: a, released: time.Now()})
}

// release hands j to the workers, starting one when none is idle and fewer
// than max_concurrency run. Past that j waits in FIFO order, and the wait
// counts in its latency.
func (d *dispatcher) release(j job) {
	if d.free.Add(-1) < 0 && d.workers < d.maxWorkers {
		d.free.Add(1) // the new worker takes this one
		d.workers++
		d.wg.Add(1)
		go d.work()
	}
	d.queue <- j
}

// work sends released jobs until the queue is closed and empty.
func (d *dispatcher) work() {
	defer d.wg.Done()
	for j := range d.queue {
		d.handle(j)
		d.free.Add(1)
	}
}

// handle sends j's arrival now that it has a slot: one request, or a
// session's turns.
func (d *dispatcher) handle(j job) {
	a := j.arrival
	if d.sending.Err() != nil {
		// Stopped while it waited for the concurrency cap.
		d.notSent(a, d.burst.Mix[a.Scenario].TurnsOf(), stopReason(d.sending))
		return
	}
	req := d.request(j)
	if req.Scenario.Conversation != nil {
		d.converse(a, req)
		return
	}
	d.record(a, d.send(a.Index, req))
}

// request is j's first request, due at its planned time. Its prompt is
// built only now, so released requests waiting for a slot hold none; a
// session's prompts come from the session.
func (d *dispatcher) request(j job) prober.Request {
	a := j.arrival
	sc := d.burst.Mix[a.Scenario]
	req := prober.Request{Scenario: sc.Scenario, Traffic: prober.TrafficBurst, Sched: d.start.Add(a.At), Released: j.released}
	switch {
	case sc.Conversation != nil:
	case d.trace != nil:
		tokens, output, prefix := d.burst.TraceLengths(a, d.trace)
		req.Prompt, req.MaxTokens = d.builders[a.Scenario].Sized(uint64(a.Index), tokens, a.BlockIDs(), prefix), output
	default:
		req.Prompt, req.MaxTokens = d.builders[a.Scenario].At(uint64(a.Index))
	}
	return req
}

// converse runs arrival a's session from its first request: its turns one
// after another, on this worker. The turns a failure or the stop leaves are
// not sent.
func (d *dispatcher) converse(a plan.Arrival, first prober.Request) {
	send := func(req prober.Request) *prober.Result {
		// Negative brake ids never meet an arrival's own.
		return d.send(-(a.Index*config.MaxTurns + req.Prompt.Turn), req)
	}
	record := func(res *prober.Result) { d.record(a, res) }
	left, why := prober.Converse(d.sending, first, d.builders[a.Scenario].Session(uint64(a.Index)), send, record)
	if left > 0 && why == "" {
		why = stopReason(d.sending)
	}
	d.notSent(a, left, why)
}

// send sends one request, telling the brake and the in-flight count; id
// tells the brake the run's requests apart.
func (d *dispatcher) send(id int, req prober.Request) *prober.Result {
	if t := tightest(req.Scenario); t > 0 {
		d.brake.started(id, req.Sched.Add(t))
	}
	if d.r.InFlight != nil {
		d.r.InFlight.Started(d.target, req.Scenario.Name, prober.TrafficBurst)
	}
	res := d.r.Client.Do(d.ctx, req)
	if d.r.InFlight != nil {
		d.r.InFlight.Finished(d.target, req.Scenario.Name, prober.TrafficBurst)
	}
	d.brake.finished(id, res)
	return res
}

// record takes the result of a request of arrival a: its tokens and its
// progress count, and a measured one's place in the run and the observer.
func (d *dispatcher) record(a plan.Arrival, res *prober.Result) {
	d.mu.Lock()
	if res.Outcome == prober.OutcomeSuccess {
		d.allTokens += res.OutputTokens
	}
	if !a.Warmup {
		d.out.Add(a.Index, res)
	}
	d.done++
	if d.r.Progress != nil {
		d.r.Progress(d.done, int(d.total.Load()))
	}
	d.mu.Unlock()
	if !a.Warmup && d.r.Observer != nil {
		d.r.Observer.Observe(res)
	}
	if d.r.Spans != nil {
		d.r.Spans.Observe(res)
	}
}

// notSent counts n requests of arrival a that were never sent, by reason;
// warmup is not in the run.
func (d *dispatcher) notSent(a plan.Arrival, n int, reason string) {
	if a.Warmup || n <= 0 {
		return
	}
	d.mu.Lock()
	d.out.NotSent[reason] += n
	d.mu.Unlock()
}

// drain waits for the workers to end what was released (sent, or counted
// as not sent once sending stopped), then stops the brake's ticks.
func (d *dispatcher) drain(stopTicks func()) {
	close(d.queue)
	d.wg.Wait()
	stopTicks()
}

// result is the run, once drained: why it stopped early, if it did, and its
// measured results in plan order, a session's turns in turn order.
func (d *dispatcher) result() report.Run {
	out := d.out
	out.Planned, out.Warmup = d.planned, d.warmup
	if context.Cause(d.sending) != nil {
		out.Aborted, out.AbortReason = true, stopReason(d.sending)
	}
	out.AllOutputTokens = d.allTokens
	if d.trace != nil {
		d.trace.out.Records = d.arrivals // this shard's share
		out.Trace = &d.trace.out         // every writer is done
	}
	out.Close(d.start)
	return out
}
