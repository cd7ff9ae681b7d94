// Package burst runs scheduled open-loop bursts: the runner with its
// concurrency cap and safety brake, rate sweeps, the scheduler that starts
// each burst on time, and the one pipeline that finishes a run's report.
package burst

import (
	"cmp"
	"context"
	"errors"
	"os"
	"time"

	"github.com/prometheus/common/version"

	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/enginemetrics"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/store"
	"github.com/llmprobe/llmprobe/shard"
)

// Runner runs bursts against one target. The zero value of every field but
// Client is a working default.
type Runner struct {
	Client *prober.Client
	// Store holds the previous report, for the regression verdict, and keeps
	// the new one; nil keeps none.
	Store *store.Store
	// Baseline, when set, is compared with instead of the previous report.
	Baseline *report.Report
	GPU      GPU             // nil where llmprobe runs without GPUs
	Observer prober.Observer // gets every measured result
	// Spans gets every result, warmup included: each request whose
	// traceparent says sampled has its span exported.
	Spans    prober.Observer
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
	// Salt salts every prompt's nonce (prompt.Builder.Salt); Measured, when
	// set, gets each run's results in plan order before they are summed up.
	// A comparison pairs its sides' requests with them.
	Salt     uint64
	Measured func(report.Run)

	// From, when set, makes the run the upgrade run of an engine change
	// from these facts: it is compared with the burst's last report from
	// them, and a significant change above MaxIncrease is a regression.
	From        *report.Facts
	MaxIncrease float64

	// releaseLate, a test's hook, releases every request this much past
	// its time: the prober's own delay, as a starved host would add it.
	releaseLate time.Duration
	// cgroupRoot, a test's hook, is where the run's cgroup is looked for
	// ("" the system's own).
	cgroupRoot string
}

// GPU reads the node's GPUs around a burst.
type GPU interface {
	// BeginBurst starts; the returned function ends with the run's output
	// tokens and gives the GPU facts, or nil.
	BeginBurst() func(outputTokens int) *report.GPUFacts
}

// Run runs burst b (or its sweep) now and finishes its report through the
// one pipeline: judged against its baseline, kept in the store. The report
// comes back judged even when the error, which is about reading or writing
// the store, is not nil.
func (r Runner) Run(ctx context.Context, b *plan.Burst) (*report.Report, error) {
	rep := r.Measure(ctx, b)
	return rep, Pipeline{Store: r.Store, Baseline: r.Baseline}.Finish(rep, b.MaxRegression, b.Keep, r.From)
}

// Measure runs burst b (or its sweep) now and returns its report as
// measured, not yet judged: its figures, the target's facts, the GPUs' and
// the engine's view, the fleet it sizes, and whether it is an upgrade run.
func (r Runner) Measure(ctx context.Context, b *plan.Burst) *report.Report {
	// The target's facts are read beside the burst: a target that hangs must
	// not hold the burst back by the info call's timeout.
	infoDone := make(chan prober.Info, 1)
	go func() { infoDone <- r.Client.RefreshInfo(ctx) }()
	host, _ := os.Hostname()
	meta := report.Meta{Version: version.Version, Host: host, Scenarios: b.ScenarioConfigs()}
	endGPU := func(int) *report.GPUFacts { return nil }
	if r.GPU != nil {
		endGPU = r.GPU.BeginBurst()
	}
	rep := r.measure(ctx, b, meta)
	rep.GPU = endGPU(rep.AllOutputTokens)
	report.SizeSweep(b.Burst, rep) // the GPUs NVML counted size the fleet
	info := <-infoDone             // the model too, where it was discovered
	rep.Model, rep.Engine, rep.EngineVersion = r.Client.Model(), info.Engine, info.EngineVersion
	rep.Overrides = r.Overrides
	if em := r.Client.Target().EngineMetrics; em != nil {
		rep.AttachEngineMetrics(enginemetrics.Options{Family: em.Family, Engine: info.Engine, Model: rep.Model})
	}
	if r.From != nil {
		rep.ExpectUpgrade(*r.From, r.MaxIncrease)
	}
	return rep
}

// measure runs the burst at its rate, or its sweep step by step, and builds
// the report.
func (r Runner) measure(ctx context.Context, b *plan.Burst, meta report.Meta) *report.Report {
	eng := r.engine(ctx)
	if b.Sweep == nil {
		// repeat: N runs it N times, one after another, for run-level
		// figures; a shard's share runs once.
		var runs []*report.Report
		for len(runs) == 0 || len(runs) < b.Repeat && r.Shard.Count <= 1 && ctx.Err() == nil && !runs[len(runs)-1].Aborted {
			run := eng.around(ctx, func() report.Run { return r.runMeasured(ctx, b, b.Rates()[0]) })
			run.Shard, run.Origin = r.Shard, r.Start
			if run.Origin.IsZero() {
				run.Origin = run.Start // a shard needs a shared Start to be merged; never year 1
			}
			runs = append(runs, report.Build(b.Burst, run, meta))
		}
		return report.CombineRuns(runs)
	}
	sw, steps := report.NewSweep(b.Burst, meta), b.Stepper()
	for rate, bisect, ok := steps.Next(); ok && ctx.Err() == nil; rate, bisect, ok = steps.Next() {
		v := sw.Add(eng.around(ctx, func() report.Run { return r.runMeasured(ctx, b, rate) }), bisect)
		steps.Record(v == decide.Passed, v == decide.Failed)
	}
	return sw.Report()
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

// around runs one run, reading the engine's gauges during it, and reads
// the page after it, even when ctx ended: a stopped burst's report still
// gets the engine's view of what it sent.
func (e *engineReads) around(ctx context.Context, run func() report.Run) report.Run {
	if e == nil {
		return run()
	}
	sampler := enginemetrics.StartSampler(ctx, *e.scraper, enginemetrics.SampleInterval)
	out := run()
	during := sampler.Stop()
	after := e.scraper.Scrape(context.WithoutCancel(ctx))
	out.Engine = &report.EngineScrapes{URL: e.scraper.URL, Before: e.last, After: after, During: during}
	e.last = after
	return out
}

// runMeasured runs one rate with the client's own delays sampled around
// it, for the report's error bound.
func (r Runner) runMeasured(ctx context.Context, b *plan.Burst, rate float64) report.Run {
	self := startSelfMeasure(cmp.Or(r.cgroupRoot, "/"))
	run := r.runRate(ctx, b, rate)
	run.Runtime = self.Done(run.Results)
	if r.Measured != nil {
		r.Measured(run)
	}
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
func (r Runner) runRate(ctx context.Context, b *plan.Burst, rate float64) report.Run {
	d := newDispatcher(ctx, r, b, rate)
	return d.run(b.Share(rate, r.Shard, d.trace))
}

// stopReason says why sending stopped: the brake's verdict, or why ctx ended.
func stopReason(sending context.Context) string {
	cause := context.Cause(sending)
	if cause == nil || errors.Is(cause, context.Canceled) {
		return "cancelled"
	}
	return cause.Error()
}
