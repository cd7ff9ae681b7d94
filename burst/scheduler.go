package burst

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
)

// Scheduler runs each configured burst on its schedule, one run of a burst
// at a time, and hands each report to onReport.
type Scheduler struct {
	logger   log.Logger
	runner   Runner
	onReport func(*report.Report)

	mu      sync.Mutex
	ctx     context.Context
	running map[string]*burstLoop
	wg      sync.WaitGroup
}

type burstLoop struct {
	burst     config.Burst
	client    *prober.Client
	scenarios []config.Scenario
	cancel    context.CancelFunc
}

// NewScheduler returns a scheduler whose loops live until ctx ends. Each run
// uses runner with the burst's target client.
func NewScheduler(ctx context.Context, logger log.Logger, runner Runner, onReport func(*report.Report)) *Scheduler {
	return &Scheduler{ctx: ctx, logger: logger, runner: runner, onReport: onReport, running: map[string]*burstLoop{}}
}

// Apply restarts loops whose burst changed and stops removed ones.
func (s *Scheduler) Apply(cfg *config.Config, clients map[string]*prober.Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	want := map[string]*burstLoop{}
	for _, b := range cfg.Bursts {
		if b.Schedule.Every == 0 && len(b.Schedule.At) == 0 && !b.Schedule.OnStart {
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
		old.cancel()
		delete(s.running, name)
	}
	for name, l := range want {
		ctx, cancel := context.WithCancel(s.ctx)
		l.cancel = cancel
		s.running[name] = l
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.loop(ctx, l.burst, l.client, l.scenarios)
		}()
	}
}

// Stop ends every loop, cancelling bursts in progress.
func (s *Scheduler) Stop() {
	s.mu.Lock()
	for name, l := range s.running {
		l.cancel()
		delete(s.running, name)
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *Scheduler) loop(ctx context.Context, b config.Burst, client *prober.Client, scenarios []config.Scenario) {
	runner := s.runner
	runner.Client = client
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())) // jitter only: no need to repeat
	first := b.Schedule.OnStart
	for {
		if !first {
			wait := nextBurstTime(b.Schedule, time.Now(), rng)
			if wait < 0 {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
		first = false
		rep, err := runner.Run(ctx, b, scenarios)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			level.Error(s.logger).Log("msg", "burst report storage", "burst", b.Name, "err", err)
		}
		level.Info(s.logger).Log("msg", "burst finished", "burst", b.Name, "passed", rep.Passed, "aborted", rep.Aborted,
			"requests", rep.Requests, "goodput_ratio", rep.Goodput.Ratio, "ttft_p99", rep.Latency["ttft"].P99, "reason", rep.AbortReason)
		if s.onReport != nil {
			s.onReport(rep)
		}
	}
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
	times := s.TimesOfDay()
	if len(times) == 0 {
		return -1
	}
	now = now.UTC()
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	best := time.Duration(-1)
	for _, t := range times {
		at := midnight.Add(t)
		if !at.After(now) {
			at = at.Add(24 * time.Hour)
		}
		if d := at.Sub(now); best < 0 || d < best {
			best = d
		}
	}
	return best
}
