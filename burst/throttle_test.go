package burst

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/sim"
)

// A request's throttling is the sum over the slots its flight touches,
// and one past its end; slots apart from it add nothing.
func TestTimelineAddsThrottling(t *testing.T) {
	start := time.Now()
	l := newTimeline(start)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	l.throttle(at(15), 30*time.Millisecond)
	l.throttle(at(25), 20*time.Millisecond)
	l.throttle(at(27), 7*time.Millisecond)
	l.throttle(at(100), 80*time.Millisecond)
	l.note(at(25), 0.004)
	for _, c := range []struct {
		from, to int
		want     time.Duration
	}{
		{0, 50, 57 * time.Millisecond},
		{12, 18, 57 * time.Millisecond}, // slot 1, and slot 2 past its end
		{20, 21, 27 * time.Millisecond},
		{30, 85, 0},
		{95, 99, 80 * time.Millisecond},
		{0, 200, 137 * time.Millisecond},
		{200, 300, 0},
	} {
		if got := l.throttledIn(at(c.from), at(c.to)); got != c.want {
			t.Errorf("in flight %d to %d ms: throttled %v, want %v", c.from, c.to, got, c.want)
		}
	}
	// The largest delays stay apart from the sums.
	if got := l.max(at(20), at(21)).Round(time.Microsecond); got != 4*time.Millisecond {
		t.Errorf("largest delay %v, want 4ms", got)
	}
}

// cgroupFixture is a v2 cgroup under a temporary root whose cpu.stat the
// test moves on, as the kernel's quota would.
type cgroupFixture struct {
	root string
	mu   sync.Mutex
	stat string
	now  time.Duration // throttled so far
	n    uint64        // periods
}

func newCgroupFixture(t *testing.T) *cgroupFixture {
	t.Helper()
	f := &cgroupFixture{root: t.TempDir()}
	f.stat = filepath.Join(f.root, "sys/fs/cgroup/llmprobe/cpu.stat")
	for name, text := range map[string]string{
		"proc/self/cgroup":    "0::/llmprobe\n",
		"proc/self/mountinfo": "25 22 0:23 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(f.root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(f.root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(f.stat), 0o755); err != nil {
		t.Fatal(err)
	}
	f.throttle(t, 0)
	return f
}

// throttle adds d of throttling in one more period.
func (f *cgroupFixture) throttle(t testing.TB, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if d > 0 {
		f.now, f.n = f.now+d, f.n+1
	}
	text := fmt.Sprintf("usage_usec 1\nnr_periods %d\nnr_throttled %d\nthrottled_usec %d\n", f.n+10, f.n, f.now.Microseconds())
	// Whole or not at all: a reader never sees half a file.
	tmp := f.stat + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		t.Error(err)
	}
	if err := os.Rename(tmp, f.stat); err != nil {
		t.Error(err)
	}
}

// Done adds the throttling the self-probe sampled to the requests in
// flight across it, and the run's total to its read side.
func TestDoneAddsThrottling(t *testing.T) {
	f := newCgroupFixture(t)
	self := startSelfMeasure(f.root)
	line := self.probe.line
	f.throttle(t, 5*time.Millisecond) // less than a slot: the first reading is a slot on
	var noted int
	testkit.WaitUntil(t, "the self-probe to note the throttling", 5*time.Second, func() bool {
		line.mu.Lock()
		defer line.mu.Unlock()
		for i, d := range line.throttled {
			if d > 0 {
				noted = i
				return true
			}
		}
		return false
	})
	slot := line.start.Add(time.Duration(noted) * timelineSlot)
	across := &prober.Result{Sched: slot.Add(-5 * time.Millisecond), TTFT: 20 * time.Millisecond, E2E: 30 * time.Millisecond, OutputChunks: 2, Outcome: prober.OutcomeSuccess}
	after := &prober.Result{Sched: slot.Add(3 * timelineSlot), TTFT: time.Millisecond, E2E: 2 * time.Millisecond, OutputChunks: 2, Outcome: prober.OutcomeSuccess}
	rt := self.Done([]*prober.Result{across, after})
	if rt == nil || rt.Throttled == nil || rt.Throttled.Seconds != 0.005 || rt.Throttled.Periods != 1 {
		t.Fatalf("run's throttling %+v, want 5ms in 1 period", rt)
	}
	if across.Throttled != 5*time.Millisecond || across.ReadDelay < across.Throttled || across.ReadDelayLast < across.Throttled || across.ReadDelayFirst < across.Throttled {
		t.Errorf("a request across the throttled slot: throttled %v, read delay %v, first %v, last %v", across.Throttled, across.ReadDelay, across.ReadDelayFirst, across.ReadDelayLast)
	}
	if after.Throttled != 0 {
		t.Errorf("a request after it: throttled %v", after.Throttled)
	}
}

// Without a cgroup the run's throttling is n/a, not 0.
func TestDoneWithoutCgroup(t *testing.T) {
	self := startSelfMeasure(t.TempDir())
	if rt := self.Done(nil); rt == nil || rt.Throttled != nil {
		t.Fatalf("run's read side %+v: throttling should be n/a", rt)
	}
}

// The kernel's throttled time adds up each CPU's run queue: a reading
// counts at most the wall-clock time since the last.
func TestThrottlingIsWallClockAtMost(t *testing.T) {
	f := newCgroupFixture(t)
	self := startSelfMeasure(f.root)
	f.throttle(t, time.Hour)
	rt := self.Done(nil)
	if rt == nil || rt.Throttled == nil || rt.Throttled.Seconds <= 0 || rt.Throttled.Seconds > time.Since(self.probe.line.start).Seconds() || rt.Throttled.Periods != 1 {
		t.Fatalf("run's throttling %+v, want the run's wall-clock time at most", rt)
	}
}

// A gate whose misses the prober's throttling explains is inconclusive and
// says how long llmprobe was throttled; without it the misses are the
// target's. The sim takes 150 ms to a first token against a 100 ms
// objective; the throttled run's cgroup is throttled all along.
func TestThrottlingDecidesMisses(t *testing.T) {
	for _, tc := range []struct {
		name     string
		throttle time.Duration
		verdict  decide.Verdict
		reason   string
	}{
		{"unthrottled", 0, decide.Failed, "slo_ttft 0.0% < 90%"},
		{"throttled", 5 * time.Millisecond, decide.Inconclusive, "slo_ttft 0.0% < 90%: within llmprobe's own delay"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newCgroupFixture(t)
			_, engine := testkit.StartSim(t, func(c *sim.Config) {
				c.PrefillBase, c.PrefillPerToken, c.DecodeBase, c.DecodePerSeq = 150*time.Millisecond, 0, 5*time.Millisecond, 0
			})
			srv := httptest.NewServer(engine.Handler())
			defer srv.Close()
			if tc.throttle > 0 {
				// Faster than the readings: every slot is throttled all along.
				stop := make(chan struct{})
				done := make(chan struct{})
				go func() {
					defer close(done)
					tick := time.NewTicker(time.Millisecond)
					defer tick.Stop()
					for {
						select {
						case <-stop:
							return
						case <-tick.C:
							f.throttle(t, tc.throttle)
						}
					}
				}()
				defer func() { close(stop); <-done }()
			}
			c, err := prober.NewClient(testkit.Target(srv.URL, config.APICompletions))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			b := burstOf(config.ArrivalConstant, 10, 0)
			b.Requests = 10
			rep, err := Runner{Client: c, cgroupRoot: f.root}.Run(context.Background(), plan.BurstOf(b, burstScenario()))
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != tc.verdict || !strings.HasPrefix(rep.VerdictReason, tc.reason) {
				t.Fatalf("verdict %q: %q, want %q: %q…", rep.Verdict, rep.VerdictReason, tc.verdict, tc.reason)
			}
			throttled := rep.ErrorBound.Runtime.Throttled
			if throttled == nil {
				t.Fatal("the run's throttling is n/a")
			}
			said := strings.Contains(rep.VerdictReason, "llmprobe was throttled for")
			if tc.throttle > 0 && (throttled.Seconds < 0.5 || throttled.Periods < 10 || !said) || tc.throttle == 0 && (throttled.Seconds != 0 || said) {
				t.Errorf("throttled %+v, verdict %q", throttled, rep.VerdictReason)
			}
		})
	}
}
