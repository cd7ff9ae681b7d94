package burst

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/target"
)

func schedulerConfig(t *testing.T, url, every string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(`targets: [{name: t, url: "`+url+`", model: m}]
scenarios: [{name: s, prompt_tokens: 8, output_tokens: 2}]
bursts:
  - {name: b, target: t, scenarios: [{scenario: s}], arrival: {rate: 10}, requests: 3, schedule: {every: `+every+`}}
  - {name: manual, target: t, scenarios: [{scenario: s}], arrival: {rate: 10}, requests: 3}
`), "test")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// A reload keeps an unchanged burst's loop, restarts a changed one (its
// schedule or its target's client), and never schedules a gate-only burst.
func TestBurstSchedulerApply(t *testing.T) {
	s := NewScheduler(context.Background(), log.NewNopLogger(), Runner{}, nil)
	defer s.Stop()
	targets := target.NewSet(log.NewNopLogger())
	defer targets.Stop()

	cfg := schedulerConfig(t, "http://127.0.0.1:1", "1h")
	s.Apply(plan.Of(cfg), targets.Apply(context.Background(), cfg))
	first := s.loops.Running()["b"]
	if first == nil || s.loops.Running()["manual"] != nil {
		t.Fatalf("running loops: %v", s.loops.Running())
	}
	s.Apply(plan.Of(cfg), targets.Apply(context.Background(), cfg))
	if s.loops.Running()["b"] != first {
		t.Error("an unchanged burst was restarted")
	}
	changed := schedulerConfig(t, "http://127.0.0.1:1", "2h")
	s.Apply(plan.Of(changed), targets.Apply(context.Background(), changed))
	second := s.loops.Running()["b"]
	if second == first {
		t.Error("a changed schedule kept the old loop")
	}
	moved := schedulerConfig(t, "http://127.0.0.1:2", "2h")
	s.Apply(plan.Of(moved), targets.Apply(context.Background(), moved))
	if s.loops.Running()["b"] == second {
		t.Error("a new target URL kept the loop with the old client")
	}
}

// fakeClock is the scheduler's time, moved only by the test: each After
// is announced on waits, and a fake run moves the time by its length.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	waits chan time.Time
	fire  chan time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *fakeClock) After(d time.Duration) (<-chan time.Time, func()) {
	c.waits <- c.Now().Add(d)
	return c.fire, func() {}
}

// rhythm runs burst b's loop on a fake clock from start, each run lasting
// runFor, until it has made n starts: it returns them, the starts it
// skipped (from Skipped) and the log.
func rhythm(t *testing.T, schedule string, start time.Time, runFor time.Duration, n int) (starts []time.Time, skipped int, logged string) {
	t.Helper()
	cfg := testkit.Config(t, `targets: [{name: t, url: "http://127.0.0.1:1", model: m}]
scenarios: [{name: s, prompt_tokens: 8, output_tokens: 2}]
bursts:
  - {name: b, target: t, scenarios: [{scenario: s}], arrival: {rate: 10}, requests: 3, schedule: `+schedule+`}
`)
	client, err := prober.NewClient(testkit.Target("http://127.0.0.1:1", config.APIChat))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	clock := &fakeClock{now: start, waits: make(chan time.Time), fire: make(chan time.Time)}
	var logs bytes.Buffer
	w := &skipCounter{}
	s := NewScheduler(context.Background(), log.NewLogfmtLogger(log.NewSyncWriter(&logs)), Runner{}, w)
	s.clock = clock
	begun := make(chan time.Time)
	s.run = func(_ Runner, ctx context.Context, b *plan.Burst) (*report.Report, error) {
		begun <- clock.Now()
		clock.advance(runFor)
		return &report.Report{Burst: b.Name, ID: "r"}, nil
	}
	s.Apply(plan.Of(cfg), map[string]*prober.Client{"t": client})
	defer s.Stop()
	for len(starts) < n {
		select {
		case at := <-clock.waits:
			if now := clock.Now(); at.Before(now) {
				t.Fatalf("the loop waits for %s, before now (%s)", at, now)
			}
			clock.advance(at.Sub(clock.Now()))
			clock.fire <- at
		case at := <-begun:
			starts = append(starts, at)
		case <-time.After(10 * time.Second):
			t.Fatalf("the loop neither waited nor ran after %d starts", len(starts))
		}
	}
	// The loop's next wait comes after the last run's skips are counted.
	select {
	case <-clock.waits:
	case <-time.After(10 * time.Second):
		t.Fatal("the loop did not wait after its last run")
	}
	s.Stop()
	return starts, w.count(), logs.String()
}

type skipCounter struct {
	mu sync.Mutex
	n  int
}

func (w *skipCounter) Due(string, time.Time)          {}
func (w *skipCounter) Finished(*report.Report, error) {}
func (w *skipCounter) Skipped(_ string, starts int)   { w.mu.Lock(); w.n += starts; w.mu.Unlock() }
func (w *skipCounter) count() int                     { w.mu.Lock(); defer w.mu.Unlock(); return w.n }

// every counts from start to start: a 20s run every minute starts a
// minute apart, not 80s, jittered or not, and skips nothing.
func TestEveryKeepsItsRhythm(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	starts, skipped, logged := rhythm(t, "{every: 1m}", t0, 20*time.Second, 10)
	if starts[0].Before(t0) || starts[0].Sub(t0) > time.Minute {
		t.Errorf("first start %s: want within a minute of %s", starts[0], t0)
	}
	for i := 1; i < len(starts); i++ {
		if d := starts[i].Sub(starts[i-1]); d != time.Minute {
			t.Errorf("start %d came %s after start %d, want 1m", i, d, i-1)
		}
	}
	if skipped != 0 || strings.Contains(logged, "skipped") {
		t.Errorf("runs shorter than the period skipped %d starts: %s", skipped, logged)
	}

	starts, _, _ = rhythm(t, "{every: 1m, jitter: 15s}", t0, 20*time.Second, 10)
	for i := 1; i < len(starts); i++ {
		if d := starts[i].Sub(starts[0]) - time.Duration(i)*time.Minute; d <= -15*time.Second || d >= 15*time.Second {
			t.Errorf("start %d is %s off the first start's grid, more than the jitter", i, d)
		}
	}

	// on_start runs at once, then on the grid from its end (a start it
	// overran is skipped like any other).
	starts, _, _ = rhythm(t, "{every: 1m, on_start: true}", t0, 20*time.Second, 4)
	if first := starts[1].Sub(t0); !starts[0].Equal(t0) || first < 20*time.Second || first > 80*time.Second || starts[2].Sub(starts[1]) != time.Minute || starts[3].Sub(starts[2]) != time.Minute {
		t.Errorf("on_start with every 1m from %s started at %v", t0, starts)
	}
}

// A run longer than the period skips the starts it overran, one at a
// time, says so and counts them; runs never overlap and never catch up.
func TestOverrunSkipsMissedStarts(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	starts, skipped, logged := rhythm(t, "{every: 1m}", t0, 80*time.Second, 5)
	for i := 1; i < len(starts); i++ {
		if d := starts[i].Sub(starts[i-1]); d != 2*time.Minute {
			t.Errorf("start %d came %s after start %d, want 2m (the start between skipped)", i, d, i-1)
		}
	}
	// Each run skipped the start after it.
	if skipped != 5 {
		t.Errorf("skipped %d starts, want 5", skipped)
	}
	missed := starts[0].Add(time.Minute).Format(stamp)
	for _, want := range []string{`level=warn`, `skipped=1`, `missed=` + missed, `next=` + starts[1].Format(stamp), `run_began=` + starts[0].Format(stamp)} {
		if !strings.Contains(logged, want) {
			t.Errorf("the log lacks %s:\n%s", want, logged)
		}
	}
	// A run of 3.5 periods misses 3 starts and names the first and last.
	starts, skipped, logged = rhythm(t, "{every: 1m}", t0, 210*time.Second, 2)
	if d := starts[1].Sub(starts[0]); d != 4*time.Minute {
		t.Errorf("after a 3m30s run the next start came %s later, want 4m", d)
	}
	if want := "skipped=3"; !strings.Contains(logged, want) || skipped < 3 {
		t.Errorf("a 3m30s run: skipped %d, log %s", skipped, logged)
	}
}
