package prober

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/common/version"

	"github.com/llmprobe/llmprobe/config"
)

// BurstScheduler runs each configured burst on its schedule, one run of a
// burst at a time, saves its report and hands it to onReport.
type BurstScheduler struct {
	logger   log.Logger
	gpu      GPUProbe
	store    *Store
	observer Observer
	inFlight InFlight
	onReport func(*Report)

	mu      sync.Mutex
	ctx     context.Context
	running map[string]*burstLoop
	wg      sync.WaitGroup
}

type burstLoop struct {
	burst     config.Burst
	client    *Client
	scenarios []config.Scenario
	cancel    context.CancelFunc
}

// NewBurstScheduler returns a scheduler whose loops live until ctx ends.
func NewBurstScheduler(ctx context.Context, logger log.Logger, store *Store, gpu GPUProbe, observer Observer, inFlight InFlight, onReport func(*Report)) *BurstScheduler {
	return &BurstScheduler{ctx: ctx, logger: logger, store: store, gpu: gpu, observer: observer, inFlight: inFlight, onReport: onReport, running: map[string]*burstLoop{}}
}

// GPUProbe reads the node's GPUs around a burst; nil where there are none.
type GPUProbe interface {
	// BeginBurst starts; the returned function ends with the run's output
	// tokens and gives the GPU facts, or nil.
	BeginBurst() func(outputTokens int) *GPUFacts
}

// Apply restarts loops whose burst changed and stops removed ones.
func (s *BurstScheduler) Apply(cfg *config.Config, clients map[string]*Client) {
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
		l := &burstLoop{burst: b, client: client}
		for _, ws := range b.Scenarios {
			sc, _ := cfg.Scenario(ws.Scenario)
			l.scenarios = append(l.scenarios, sc)
		}
		want[b.Name] = l
	}
	// A loop keeps running only if its burst, its target's client and its
	// scenarios are all unchanged.
	for name, old := range s.running {
		if nw, ok := want[name]; ok && old.client == nw.client && sameJSON(old.burst, nw.burst) && sameJSON(old.scenarios, nw.scenarios) {
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

func sameJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// Stop ends every loop, cancelling bursts in progress.
func (s *BurstScheduler) Stop() {
	s.mu.Lock()
	for name, l := range s.running {
		l.cancel()
		delete(s.running, name)
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *BurstScheduler) loop(ctx context.Context, b config.Burst, client *Client, scenarios []config.Scenario) {
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), hashString(b.Name)))
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
		rep, err := RunOnce(ctx, b, client, scenarios, s.store, s.gpu, s.observer, s.inFlight, nil)
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

// RunOnce runs a burst now against client, compares it with the stored
// previous report, and saves it. Used by the scheduler and `llmprobe gate`.
func RunOnce(ctx context.Context, b config.Burst, client *Client, scenarios []config.Scenario, store *Store, gpu GPUProbe, observer Observer, inFlight InFlight, progress func(done, total int)) (*Report, error) {
	info := client.RefreshInfo(ctx)
	host, _ := os.Hostname()
	meta := ReportMeta{Model: client.Model(), Engine: info.Engine, EngineVersion: info.EngineVersion, Version: version.Version, Host: host, Scenarios: scenarios}
	var previous *Report
	var loadErr error
	if store != nil {
		// Without the previous report the run still counts; it only lacks a regression verdict.
		if previous, loadErr = store.Latest(b.Name); loadErr != nil {
			loadErr = fmt.Errorf("previous report of %s: %w", b.Name, loadErr)
		}
	}
	endGPU := func(int) *GPUFacts { return nil }
	if gpu != nil {
		endGPU = gpu.BeginBurst()
	}
	rep := Run(ctx, BurstRun{Burst: b, Client: client, Scenarios: scenarios, Observer: observer, InFlight: inFlight, Progress: progress}, meta, previous)
	rep.GPU = endGPU(rep.AllOutputTokens)
	if store != nil && ctx.Err() == nil {
		return rep, errors.Join(loadErr, store.Save(rep, b.Keep))
	}
	return rep, loadErr
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
