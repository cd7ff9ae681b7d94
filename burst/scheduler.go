package burst

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/llmprobe/llmprobe/burst/plan"
	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/config/workload"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
)

// Scheduler runs each configured burst on its schedule, one run of a burst
// at a time, and tells its Watcher what it does.
type Scheduler struct {
	logger  log.Logger
	runner  Runner
	watcher Watcher

	mu      sync.Mutex
	ctx     context.Context
	running map[string]*burstLoop
	watches map[string]*engineWatch // by burst name: bursts with on_engine_change
	wg      sync.WaitGroup
}

// Watcher is told when each burst is due and how each run went.
type Watcher interface {
	// Due says when a burst's next run is due or, while it runs, when it
	// should be done: past that, the burst is overdue. A zero time says no
	// run is due: the burst waits for an engine change, or for nothing.
	Due(burst string, at time.Time)
	// Finished takes a run's report and the error of saving it, if any.
	Finished(r *report.Report, saveErr error)
}

type burstLoop struct {
	burst     config.Burst
	client    *prober.Client
	scenarios []workload.Scenario
	cancel    context.CancelCauseFunc
}

// Why a scheduled burst stops early; its report says so.
var (
	errReloaded = errors.New("stopped: a configuration reload removed or changed the burst")
	errStopping = errors.New("stopped: llmprobe is shutting down")
)

// NewScheduler returns a scheduler whose loops live until ctx ends. Each run
// uses runner with the burst's target client.
func NewScheduler(ctx context.Context, logger log.Logger, runner Runner, watcher Watcher) *Scheduler {
	return &Scheduler{ctx: ctx, logger: logger, runner: runner, watcher: watcher, running: map[string]*burstLoop{}, watches: map[string]*engineWatch{}}
}

// Apply restarts loops whose burst changed and stops removed ones; a run in
// progress is stopped, and its report says so.
func (s *Scheduler) Apply(cfg *config.Config, clients map[string]*prober.Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.applyWatches(cfg, clients)
	want := map[string]*burstLoop{}
	for _, b := range cfg.Bursts {
		if sc := b.Schedule; sc.Every == 0 && len(sc.At) == 0 && !sc.OnStart && sc.OnEngineChange == nil {
			continue // run only by `llmprobe gate`
		}
		client := clients[b.Target]
		if client == nil {
			continue
		}
		want[b.Name] = &burstLoop{burst: b, client: client, scenarios: cfg.ScenariosOf(b)}
	}
	// A loop keeps running only if its burst, its target's client and its
	// scenarios are all unchanged.
	for name, old := range s.running {
		if nw, ok := want[name]; ok && old.client == nw.client && config.Equal(old.burst, nw.burst) && config.Equal(old.scenarios, nw.scenarios) {
			delete(want, name)
			continue
		}
		old.cancel(errReloaded)
		delete(s.running, name)
	}
	for name, l := range want {
		ctx, cancel := context.WithCancelCause(s.ctx)
		l.cancel = cancel
		s.running[name] = l
		s.wg.Add(1)
		watch := s.watches[name]
		go func() {
			defer s.wg.Done()
			s.loop(ctx, l.burst, l.client, l.scenarios, watch)
		}()
	}
}

// Stop ends every loop; runs in progress stop, and their reports are saved
// before it returns.
func (s *Scheduler) Stop() {
	s.mu.Lock()
	for name, l := range s.running {
		l.cancel(errStopping)
		delete(s.running, name)
	}
	for _, w := range s.watches {
		w.stop()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// loop runs b on its schedule and, with a watch, when its target's engine
// changed; one run at a time, so a change seen during a run waits for it.
func (s *Scheduler) loop(ctx context.Context, b config.Burst, client *prober.Client, scenarios []workload.Scenario, watch *engineWatch) {
	runner := s.runner
	runner.Client = client
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())) // jitter only: no need to repeat
	first := b.Schedule.OnStart
	var changed <-chan struct{}
	if watch != nil {
		changed = watch.signal
	}
	for {
		runner.From = nil
		if !first {
			wait := nextBurstTime(b.Schedule, time.Now(), rng)
			var timer *time.Timer
			var due <-chan time.Time
			switch {
			case wait >= 0:
				s.due(b.Name, time.Now().Add(wait))
				timer = time.NewTimer(wait)
				due = timer.C
			case watch == nil:
				s.due(b.Name, time.Time{})
				return
			default:
				s.due(b.Name, time.Time{})
			}
			onChange := false
			select {
			case <-ctx.Done():
			case <-due:
			case <-changed:
				onChange = true
			}
			if timer != nil {
				timer.Stop()
			}
			if ctx.Err() != nil {
				if onChange {
					watch.poke() // for the loop a reload starts in this one's place
				}
				return
			}
			if onChange {
				if runner.From = watch.take(); runner.From == nil {
					continue // a scheduled run took it already
				}
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
		s.due(b.Name, time.Now().Add(runLength(b, client.Target().Timeout.Std())+time.Minute))
		rep, err := runner.Run(ctx, b, scenarios)
		s.logRun(rep, err)
		if s.watcher != nil {
			s.watcher.Finished(rep, err)
		}
		if ctx.Err() != nil {
			return
		}
	}
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
	if rep.Goodput.Ratio != nil {
		kv = append(kv, "goodput_ratio", *rep.Goodput.Ratio)
	}
	if ttft := rep.Latency["ttft"]; ttft.Count > 0 {
		kv = append(kv, "ttft_p99", ttft.P99)
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
			kv = append(kv, "failed_gate", g.Name+": "+g.Detail)
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

// runLength is about how long a run of b may last: its sweep steps, then
// the target's timeout for the last requests in flight, once per repeat.
func runLength(b config.Burst, timeout time.Duration) time.Duration {
	total := timeout // the last requests' in flight
	for _, rate := range plan.Rates(b) {
		total += b.Warmup.Duration.Std() + b.Duration.Std()
		if rate > 0 {
			total += time.Duration(float64(b.Warmup.Requests+b.Requests) / rate * float64(time.Second))
		}
	}
	return total * time.Duration(max(b.Repeat, 1)) // each run of a repeat
}

// nextBurstTime is the wait until the next run: every (plus jitter), or the
// next configured time of day (UTC); -1 when the burst has no schedule left.
func nextBurstTime(s config.BurstSchedule, now time.Time, rng *rand.Rand) time.Duration {
	if s.Every > 0 {
		wait := s.Every.Std()
		if s.Jitter > 0 {
			wait += time.Duration(rng.Int64N(int64(s.Jitter)))
		}
		return wait
	}
	now = now.UTC()
	best := time.Duration(-1)
	for _, hhmm := range s.At { // validated: HH:MM, UTC
		t, err := time.Parse("15:04", hhmm)
		if err != nil {
			continue
		}
		at := time.Date(now.Year(), now.Month(), now.Day(), t.Hour(), t.Minute(), 0, 0, time.UTC)
		if !at.After(now) {
			at = at.Add(24 * time.Hour)
		}
		if d := at.Sub(now); best < 0 || d < best {
			best = d
		}
	}
	return best
}
