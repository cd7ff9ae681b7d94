package prober

import (
	"context"
	"math/rand/v2"
	"reflect"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/llmprobe/llmprobe/config"
)

// Observer receives every finished result (metrics, history).
type Observer interface {
	Observe(*Result)
}

// InFlight is told when a request starts and ends.
type InFlight interface {
	Started(target, scenario, traffic string)
	Finished(target, scenario, traffic string)
}

// Canary runs one schedule per (target, scenario): a request every interval,
// plus jitter, with schedules spread over the interval so targets never fire
// together. Schedules run on their own, decoupled from scrapes, and each
// request runs in its own goroutine, so a slow or dead target delays nothing.
type Canary struct {
	logger   log.Logger
	observer Observer
	inFlight InFlight

	mu        sync.Mutex
	ctx       context.Context
	schedules map[scheduleKey]*schedule
	wg        sync.WaitGroup
}

type scheduleKey struct{ target, scenario string }

type schedule struct {
	client   *Client
	scenario config.Scenario
	interval time.Duration
	jitter   time.Duration
	cancel   context.CancelFunc
	done     chan struct{}
}

// NewCanary returns a Canary whose schedules live until ctx ends.
func NewCanary(ctx context.Context, logger log.Logger, observer Observer, inFlight InFlight) *Canary {
	return &Canary{ctx: ctx, logger: logger, observer: observer, inFlight: inFlight, schedules: map[scheduleKey]*schedule{}}
}

// Apply brings the schedules in line with cfg: removed pairs stop, new ones
// start, changed ones restart; unchanged ones keep their rhythm.
func (c *Canary) Apply(cfg *config.Config, clients map[string]*Client) {
	c.mu.Lock()
	defer c.mu.Unlock()
	want := map[scheduleKey]*schedule{}
	for _, p := range cfg.CanaryPairs() {
		if clients[p.Target] == nil {
			continue // its client could not be built; Targets reported why
		}
		sc, _ := cfg.Scenario(p.Scenario)
		want[scheduleKey{p.Target, p.Scenario}] = &schedule{
			client:   clients[p.Target],
			scenario: sc,
			interval: p.Interval,
			jitter:   min(cfg.Canary.Jitter.Std(), p.Interval/2),
		}
	}
	for k, old := range c.schedules {
		if nw, ok := want[k]; ok && old.same(nw) {
			want[k] = old
			continue
		}
		old.cancel()
		delete(c.schedules, k)
	}
	for k, s := range want {
		if _, running := c.schedules[k]; running {
			continue
		}
		ctx, cancel := context.WithCancel(c.ctx)
		s.cancel, s.done = cancel, make(chan struct{})
		c.schedules[k] = s
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			defer close(s.done)
			c.run(ctx, s)
		}()
	}
}

func (s *schedule) same(o *schedule) bool {
	return s.client == o.client && s.interval == o.interval && s.jitter == o.jitter && reflect.DeepEqual(s.scenario, o.scenario)
}

// Stop ends every schedule and waits for their requests to finish.
func (c *Canary) Stop() {
	c.mu.Lock()
	for k, s := range c.schedules {
		s.cancel()
		delete(c.schedules, k)
	}
	c.mu.Unlock()
	c.wg.Wait()
}

// Phase spreads schedules over the interval by a stable hash of their names.
func Phase(target, scenario string, interval time.Duration) time.Duration {
	if interval <= 0 {
		return 0
	}
	return time.Duration(hashString(target+"\x00"+scenario) % uint64(interval))
}

func (c *Canary) run(ctx context.Context, s *schedule) {
	target := s.client.Target().Name
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), hashString(target+s.scenario.Name)))
	prompts := NewPromptBuilder(s.scenario, rng.Uint64())
	var reqs sync.WaitGroup
	defer reqs.Wait()

	now := time.Now()
	// Align ticks to the interval grid plus the schedule's phase, so restarts
	// and replicas keep the same rhythm.
	tick := now.Truncate(s.interval).Add(Phase(target, s.scenario.Name, s.interval))
	if tick.Before(now) {
		tick = tick.Add(s.interval)
	}
	timer := time.NewTimer(time.Until(tick))
	defer timer.Stop()
	for {
		var jitter time.Duration
		if s.jitter > 0 {
			jitter = time.Duration(rng.Int64N(int64(s.jitter)))
		}
		sched := tick.Add(jitter)
		timer.Reset(time.Until(sched))
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		prompt, maxTokens := prompts.Next()
		req := Request{Scenario: s.scenario, Traffic: TrafficCanary, Prompt: prompt, MaxTokens: maxTokens, Sched: sched}
		reqs.Add(1)
		go func() {
			defer reqs.Done()
			c.inFlight.Started(target, s.scenario.Name, TrafficCanary)
			res := s.client.Do(ctx, req)
			c.inFlight.Finished(target, s.scenario.Name, TrafficCanary)
			if ctx.Err() != nil && res.Outcome != OutcomeSuccess {
				return // stopped by a reload or shutdown, not by the target
			}
			if res.Outcome != OutcomeSuccess {
				level.Debug(c.logger).Log("msg", "probe failed", "target", target, "scenario", s.scenario.Name, "outcome", res.Outcome, "err", res.Error)
			}
			c.observer.Observe(res)
		}()
		tick = tick.Add(s.interval)
		if behind := time.Since(tick); behind > s.interval {
			// Suspended or starved: skip the missed ticks rather than fire a salvo.
			tick = tick.Add(behind.Truncate(s.interval))
		}
	}
}
