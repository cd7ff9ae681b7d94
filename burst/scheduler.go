package burst

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/lib/figure"
	"github.com/llmprobe/llmprobe/lib/reconcile"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
)

// Scheduler runs each configured burst on its schedule, one run of a burst
// at a time, and tells its Watcher what it does.
type Scheduler struct {
	logger  log.Logger
	runner  Runner
	watcher Watcher

	loops *reconcile.Set[string, *burstLoop]

	mu      sync.Mutex
	watches map[string]*engineWatch // by burst name: bursts with on_engine_change

	// clock and run are time and Runner.Run; tests drive their own.
	clock timer
	run   func(Runner, context.Context, *plan.Burst) (*report.Report, error)
}

// timer is the scheduler's time.
type timer interface {
	Now() time.Time
	// After's channel receives once d has passed; cancel stops it.
	After(d time.Duration) (c <-chan time.Time, cancel func())
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) After(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}

// Watcher is told when each burst is due and how each run went.
type Watcher interface {
	// Due says when a burst's next run is due or, while it runs, when it
	// should be done: past that, the burst is overdue. A zero time says no
	// run is due: the burst waits for an engine change, or for nothing.
	Due(burst string, at time.Time)
	// Finished takes a run's report and the error of saving it, if any.
	Finished(r *report.Report, saveErr error)
	// Skipped counts starts of a burst that were planned while its
	// previous run still ran, and were not made up.
	Skipped(burst string, starts int)
}

// burstLoop is what one burst's loop runs with.
type burstLoop struct {
	burst  *plan.Burst
	client *prober.Client
	watch  *engineWatch // with on_engine_change
}

// same: a loop keeps running only if its burst (with its scenarios) and
// its target's client are unchanged.
func (l *burstLoop) same(o *burstLoop) bool {
	return l.client == o.client && config.Equal(l.burst, o.burst)
}

// Why a scheduled burst stops early; its report says so.
var (
	errReloaded = errors.New("stopped: a configuration reload removed or changed the burst")
	errStopping = errors.New("stopped: llmprobe is shutting down")
)

// NewScheduler returns a scheduler whose loops live until ctx ends. Each run
// uses runner with the burst's target client.
func NewScheduler(ctx context.Context, logger log.Logger, runner Runner, watcher Watcher) *Scheduler {
	s := &Scheduler{logger: logger, runner: runner, watcher: watcher, watches: map[string]*engineWatch{},
		clock: wallClock{}, run: Runner.Run}
	s.loops = reconcile.New(ctx, (*burstLoop).same, func(ctx context.Context, _ string, l *burstLoop) {
		s.loop(ctx, l.burst, l.client, l.watch)
	})
	return s
}

// Apply restarts loops whose burst changed and stops removed ones; a run in
// progress is stopped, and its report says so.
func (s *Scheduler) Apply(p *plan.Plan, clients map[string]*prober.Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.applyWatches(p.Config, clients)
	want := map[string]*burstLoop{}
	for _, b := range p.Bursts {
		if sc := b.Schedule; sc.Every == 0 && len(sc.At) == 0 && !sc.OnStart && sc.OnEngineChange == nil {
			continue // run only by `llmprobe gate`
		}
		client := clients[b.Target]
		if client == nil {
			continue
		}
		want[b.Name] = &burstLoop{burst: b, client: client, watch: s.watches[b.Name]}
	}
	s.loops.Apply(want, errReloaded)
}

// Stop ends every loop; runs in progress stop, and their reports are saved
// before it returns.
func (s *Scheduler) Stop() {
	s.mu.Lock()
	for _, w := range s.watches {
		w.stop()
	}
	s.mu.Unlock()
	s.loops.Stop(errStopping)
}

// loop runs b on its schedule and, with a watch, when its target's engine
// changed; one run at a time, so a change seen during a run waits for it,
// and a start planned while a run still runs is skipped, not made up.
func (s *Scheduler) loop(ctx context.Context, b *plan.Burst, client *prober.Client, watch *engineWatch) {
	runner := s.runner
	runner.Client = client
	cad := b.Cadence(rand.Uint64()) // the seed draws jitter only: no need to repeat
	var next int64                  // the start waited for
	if cad != nil {
		next = cad.From(s.clock.Now())
	}
	first := b.Schedule.OnStart
	for {
		runner.From = nil
		ticked := false
		if !first {
			var stop bool
			if ticked, runner.From, stop = s.await(ctx, b.Name, cad, next, watch); stop {
				return
			}
			if !ticked && runner.From == nil {
				continue // a scheduled run took the change already
			}
		}
		first = false
		if runner.From == nil && watch != nil {
			// A scheduled run that finds a settled change pending is the upgrade run.
			runner.From = watch.take()
		}
		if runner.From != nil {
			level.Info(s.logger).Log("msg", "engine change settled; running the upgrade burst", "burst", b.Name, "target", b.Target, "from", runner.From.String())
			runner.MaxIncrease = b.Schedule.OnEngineChange.MaxIncrease
		}
		began := s.clock.Now()
		s.due(b.Name, began.Add(b.RunLength(client.Target().Timeout.Std())+time.Minute))
		rep, err := s.run(runner, ctx, b)
		s.logRun(rep, err)
		if s.watcher != nil {
			s.watcher.Finished(rep, err)
		}
		if ctx.Err() != nil {
			return
		}
		if cad != nil {
			if ticked {
				next++
			}
			next = s.skipMissed(b.Name, cad, next, began)
		}
	}
}

// await waits for start next of cad, or for watch's settled engine change
// (then from is the change's "from": nil when a scheduled run took it).
// stop says the loop ends: ctx ended, or nothing is left to wait for.
func (s *Scheduler) await(ctx context.Context, burst string, cad *plan.Cadence, next int64, watch *engineWatch) (ticked bool, from *report.Facts, stop bool) {
	var due <-chan time.Time
	switch {
	case cad != nil:
		at := cad.Start(next)
		s.due(burst, at)
		c, cancel := s.clock.After(at.Sub(s.clock.Now()))
		defer cancel()
		due = c
	case watch == nil:
		s.due(burst, time.Time{})
		return false, nil, true
	default:
		s.due(burst, time.Time{})
	}
	var changed <-chan struct{}
	if watch != nil {
		changed = watch.signal
	}
	select {
	case <-ctx.Done():
		return false, nil, true
	case <-due:
		return true, nil, ctx.Err() != nil
	case <-changed:
		if ctx.Err() != nil {
			watch.poke() // for the loop a reload starts in this one's place
			return false, nil, true
		}
		return false, watch.take(), false
	}
}

// stamp is how a skip's log line writes instants: UTC, to the millisecond.
const stamp = "2006-01-02T15:04:05.000Z07:00"

// skipMissed is the start to wait for after a run that began at began:
// next, or past the starts planned before the run ended. Those are
// skipped (runs never overlap, and a late run is no catching up), logged
// and counted.
func (s *Scheduler) skipMissed(burst string, cad *plan.Cadence, next int64, began time.Time) int64 {
	ended := s.clock.Now()
	resume := cad.From(ended)
	if resume <= next {
		return next
	}
	skipped := resume - next
	missed := make([]string, 0, 3)
	for k := next; k < resume && len(missed) < 3; k++ {
		missed = append(missed, cad.Start(k).Format(stamp))
	}
	if skipped > 3 {
		missed[2] = "… " + cad.Start(resume-1).Format(stamp)
	}
	level.Warn(s.logger).Log("msg", "burst starts skipped: the run before was still running; runs never overlap, and missed starts are not made up",
		"burst", burst, "skipped", skipped, "missed", strings.Join(missed, ", "),
		"run_began", began.UTC().Format(stamp), "run_ended", ended.UTC().Format(stamp), "next", cad.Start(resume).Format(stamp))
	if s.watcher != nil {
		s.watcher.Skipped(burst, int(skipped))
	}
	return resume
}

func (s *Scheduler) due(burst string, at time.Time) {
	if s.watcher != nil {
		s.watcher.Due(burst, at)
	}
}

// logRun writes the one line a finished burst gets: its verdict and, when it
// failed, why.
func (s *Scheduler) logRun(rep *report.Report, saveErr error) {
	kv := []any{"msg", "burst finished", "burst", rep.Burst, "report", rep.ID, "passed", rep.Passed, "requests", rep.Requests, "planned", rep.PlannedRequests}
	// Figures as the pages and the gate print them: 109.6ms, 99.5%.
	if rep.Goodput.Ratio != nil {
		kv = append(kv, "goodput", figure.Percent(*rep.Goodput.Ratio))
	}
	if ttft := rep.Latency["ttft"]; ttft.Count > 0 {
		kv = append(kv, "ttft_p99", figure.Ms(ttft.P99))
	}
	if rep.Aborted {
		kv = append(kv, "aborted", rep.AbortReason)
	}
	if e := rep.EngineMetrics; e != nil && e.Error != "" {
		kv = append(kv, "engine_metrics", "n/a: "+e.Error)
	}
	if rep.Upgrade != nil {
		kv = append(kv, "upgrade", rep.Upgrade.Summary)
	}
	for _, g := range rep.Gates {
		if !g.Passed {
			key := "failed_gate"
			if g.Undecided {
				key = "undecided_gate"
			}
			kv = append(kv, key, g.Name+": "+g.Detail)
			break
		}
	}
	if len(rep.Failures) > 0 {
		f := rep.Failures[0]
		kv = append(kv, "top_failure", fmt.Sprintf("%d × %s: %s", f.Count, f.Outcome, f.Text()))
	}
	if saveErr != nil {
		kv = append(kv, "save_err", saveErr)
		level.Error(s.logger).Log(kv...)
		return
	}
	level.Info(s.logger).Log(kv...)
}
