package prober

import (
	"context"
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
	burst  config.Burst
	cancel context.CancelFunc
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
	for name, l := range s.running {
		if b, ok := cfg.Burst(name); ok && sameBurst(b, l.burst) {
			continue
		}
		l.cancel()
		delete(s.running, name)
	}
	for _, b := range cfg.Bursts {
		if _, ok := s.running[b.Name]; ok {
			continue
		}
		if b.Schedule.Every == 0 && len(b.Schedule.At) == 0 && !b.Schedule.OnStart {
			continue // run only by `llmprobe gate`
		}
		client := clients[b.Target]
		if client == nil {
			continue
		}
		var scenarios []config.Scenario
		for _, ws := range b.Scenarios {
			sc, _ := cfg.Scenario(ws.Scenario)
			scenarios = append(scenarios, sc)
		}
		ctx, cancel := context.WithCancel(s.ctx)
		s.running[b.Name] = &burstLoop{burst: b, cancel: cancel}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.loop(ctx, b, client, scenarios)
		}()
	}
}

func sameBurst(a, b config.Burst) bool {
	ja, _ := jsonMarshal(a)
	jb, _ := jsonMarshal(b)
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
			level.Error(s.logger).Log("msg", "burst report not saved", "burst", b.Name, "err", err)
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
	if store != nil {
		previous, _ = store.Latest(b.Name)
	}
	endGPU := func(int) *GPUFacts { return nil }
	if gpu != nil {
		endGPU = gpu.BeginBurst()
	}
	rep := Run(ctx, BurstRun{Burst: b, Client: client, Scenarios: scenarios, Observer: observer, InFlight: inFlight, Progress: progress}, meta, previous)
	rep.GPU = endGPU(rep.AllOutputTokens)
	if store != nil && ctx.Err() == nil {
		return rep, store.Save(rep, b.Keep)
	}
	return rep, nil
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
