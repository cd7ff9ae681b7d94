// Package canary runs the always-on probes: one schedule per (target,
// scenario), spread over the interval, each request in its own goroutine.
package canary

import (
	"cmp"
	"context"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/lib/clock"
	"github.com/llmprobe/llmprobe/lib/reconcile"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
)

// Scheduler runs one schedule per (target, scenario): a request every
// interval, plus jitter, with schedules spread over the interval so targets
// never fire together. Schedules run on their own, decoupled from scrapes,
// and each request runs in its own goroutine, so a slow or dead target
// delays nothing.
type Scheduler struct {
	logger    log.Logger
	observer  prober.Observer
	inFlight  prober.InFlight
	schedules *reconcile.Set[scheduleKey, *schedule]
}

type scheduleKey struct{ target, scenario string }

type schedule struct {
	client   *prober.Client
	scenario *plan.Scenario
	interval time.Duration
	jitter   time.Duration
}

// NewScheduler returns a Scheduler whose schedules live until ctx ends.
func NewScheduler(ctx context.Context, logger log.Logger, observer prober.Observer, inFlight prober.InFlight) *Scheduler {
	c := &Scheduler{logger: logger, observer: observer, inFlight: inFlight}
	c.schedules = reconcile.New(ctx, (*schedule).same, func(ctx context.Context, _ scheduleKey, s *schedule) { c.run(ctx, s) })
	return c
}

// Apply brings the schedules in line with cfg: removed pairs stop, new ones
// start, changed ones restart; unchanged ones keep their rhythm.
func (c *Scheduler) Apply(pl *plan.Plan, clients map[string]*prober.Client) {
	cfg := pl.Config
	want := map[scheduleKey]*schedule{}
	for _, p := range cfg.CanaryPairs() {
		if clients[p.Target] == nil {
			continue // its client could not be built; Targets reported why
		}
		sc, _ := pl.Scenario(p.Scenario)
		want[scheduleKey{p.Target, p.Scenario}] = &schedule{
			client:   clients[p.Target],
			scenario: sc,
			interval: p.Interval,
			jitter:   min(cfg.Canary.Jitter.Std(), p.Interval/2),
		}
	}
	c.schedules.Apply(want, nil)
}

func (s *schedule) same(o *schedule) bool {
	return s.client == o.client && s.interval == o.interval && s.jitter == o.jitter && config.Equal(s.scenario, o.scenario)
}

// Running lists the schedules that run, by target then scenario.
func (c *Scheduler) Running() []config.Pair {
	running := c.schedules.Running()
	out := make([]config.Pair, 0, len(running))
	for k, s := range running {
		out = append(out, config.Pair{Target: k.target, Scenario: k.scenario, Interval: s.interval})
	}
	slices.SortFunc(out, func(a, b config.Pair) int {
		return cmp.Or(cmp.Compare(a.Target, b.Target), cmp.Compare(a.Scenario, b.Scenario))
	})
	return out
}

// Stop ends every schedule and waits for their requests to finish.
func (c *Scheduler) Stop() { c.schedules.Stop(nil) }

// phase spreads schedules over the interval by a stable hash of their names,
// so restarts and replicas keep the same rhythm.
func phase(target, scenario string, interval time.Duration) time.Duration {
	if interval <= 0 {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(target + "\x00" + scenario))
	return time.Duration(h.Sum64() % uint64(interval))
}

func (c *Scheduler) run(ctx context.Context, s *schedule) {
	target := s.client.Target().Name
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())) // jitter and nonces: never repeated across restarts
	prompts := s.scenario.Builder(rng.Uint64())
	var reqs sync.WaitGroup
	defer reqs.Wait()

	now := time.Now()
	// Align ticks to the interval grid plus the schedule's phase, so restarts
	// and replicas keep the same rhythm.
	tick := now.Truncate(s.interval).Add(phase(target, s.scenario.Name, s.interval))
	if tick.Before(now) {
		tick = tick.Add(s.interval)
	}
	pacer := clock.NewPacer()
	defer pacer.Close()
	for {
		var jitter time.Duration
		if s.jitter > 0 {
			jitter = time.Duration(rng.Int64N(int64(s.jitter)))
		}
		sched := tick.Add(jitter)
		if !pacer.Until(ctx, sched) {
			return
		}
		req := prober.Request{Scenario: s.scenario.Scenario, Traffic: prober.TrafficCanary, Sched: sched}
		do := func(req prober.Request) *prober.Result {
			c.inFlight.Started(target, s.scenario.Name, prober.TrafficCanary)
			defer c.inFlight.Finished(target, s.scenario.Name, prober.TrafficCanary)
			return s.client.Do(ctx, req)
		}
		observe := func(res *prober.Result) {
			if ctx.Err() != nil && res.Outcome != prober.OutcomeSuccess {
				return // stopped by a reload or shutdown, not by the target
			}
			if res.Outcome != prober.OutcomeSuccess {
				level.Debug(c.logger).Log("msg", "probe failed", "target", target, "scenario", s.scenario.Name, "turn", res.Turn, "outcome", res.Outcome, "err", res.Error)
			}
			c.observer.Observe(res)
		}
		reqs.Add(1)
		if s.scenario.Conversation != nil {
			// A tick starts a session; its turns follow in their own time,
			// overlapping the next tick's session when it lasts longer.
			session := prompts.Session(rng.Uint64())
			go func() {
				defer reqs.Done()
				prober.Converse(ctx, req, session, do, observe)
			}()
		} else {
			req.Prompt, req.MaxTokens = prompts.Next()
			go func() {
				defer reqs.Done()
				observe(do(req))
			}()
		}
		tick = tick.Add(s.interval)
		if behind := time.Since(tick); behind > s.interval {
			// Suspended or starved: skip the missed ticks rather than fire a salvo.
			tick = tick.Add(behind.Truncate(s.interval))
		}
	}
}
