package canary

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"
	"go.uber.org/goleak"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/sim"
	"github.com/llmprobe/llmprobe/target"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// recorder is the observer and in-flight counter of a test.
type recorder struct {
	mu      sync.Mutex
	results []*prober.Result
	live    map[string]int
}

func (r *recorder) Observe(res *prober.Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.results = append(r.results, res)
}

func (r *recorder) Started(target, _, _ string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live == nil {
		r.live = map[string]int{}
	}
	r.live[target]++
}

func (r *recorder) Finished(target, _, _ string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live[target]--
}

func (r *recorder) of(target string) []*prober.Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*prober.Result
	for _, res := range r.results {
		if res.Target == target {
			out = append(out, res)
		}
	}
	return out
}

func canaryConfig(t *testing.T, healthyURL, deadURL string) *config.Config {
	t.Helper()
	return testkit.Config(t, "targets:\n"+
		"  - {name: healthy, url: '"+healthyURL+"', model: m, api: completions, timeout: 2s}\n"+
		"  - {name: dead, url: '"+deadURL+"', model: m, api: completions, timeout: 400ms}\n"+
		"scenarios:\n  - {name: s, prompt_tokens: 8, output_tokens: 2}\n"+
		"canary: {interval: 100ms, jitter: 10ms}\n")
}

// A dead target (it never answers) must not delay the healthy one.
func TestCanaryDeadTargetDelaysNothing(t *testing.T) {
	healthy, _ := testkit.StartSim(t, func(c *sim.Config) { c.PrefillBase, c.DecodeBase = time.Millisecond, time.Millisecond })
	dead := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read the body, so the server notices when the client hangs up, then wait for that.
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	defer dead.Close()

	cfg := canaryConfig(t, healthy.URL, dead.URL)
	rec := &recorder{}
	targets := target.NewSet(log.NewNopLogger())
	defer targets.Stop()
	canary := NewScheduler(context.Background(), log.NewNopLogger(), rec, rec)
	canary.Apply(plan.Of(cfg), targets.Apply(context.Background(), cfg))

	testkit.WaitUntil(t, "10 healthy results and 3 dead ones", 10*time.Second, func() bool {
		return len(rec.of("healthy")) >= 10 && len(rec.of("dead")) >= 3
	})
	canary.Stop()

	for _, r := range rec.of("healthy") {
		if r.Outcome != prober.OutcomeSuccess {
			t.Errorf("healthy target: %s %s", r.Outcome, r.Error)
		}
		// Generous for a loaded CI machine; a blocked schedule would be late by the dead target's 400ms.
		if r.DispatchDelay > 100*time.Millisecond {
			t.Errorf("healthy target dispatched %s late", r.DispatchDelay)
		}
	}
	for _, r := range rec.of("dead") {
		if r.Outcome != prober.OutcomeTimeout {
			t.Errorf("dead target: %s, want timeout", r.Outcome)
		}
	}
	// Ticks keep their rhythm: consecutive healthy requests are due ~interval apart.
	hs := rec.of("healthy")
	for i := 1; i < len(hs); i++ {
		if gap := hs[i].Sched.Sub(hs[i-1].Sched); gap < 80*time.Millisecond || gap > 120*time.Millisecond {
			t.Errorf("requests %d and %d due %s apart, want 100ms ± jitter", i-1, i, gap)
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for target, n := range rec.live {
		if n != 0 {
			t.Errorf("%s: %d requests still counted in flight after Stop", target, n)
		}
	}
}

func TestCanaryApplyKeepsUnchangedSchedules(t *testing.T) {
	cfg := canaryConfig(t, "http://127.0.0.1:1", "http://127.0.0.1:2")
	rec := &recorder{}
	targets := target.NewSet(log.NewNopLogger())
	defer targets.Stop()
	canary := NewScheduler(context.Background(), log.NewNopLogger(), rec, rec)
	defer canary.Stop()
	clients := targets.Apply(context.Background(), cfg)
	canary.Apply(plan.Of(cfg), clients)
	before := canary.schedules.Running()[scheduleKey{"healthy", "s"}]

	// Drop the dead target; healthy's schedule must be the same one.
	cfg2 := *cfg
	cfg2.Targets = cfg.Targets[:1]
	canary.Apply(plan.Of(&cfg2), targets.Apply(context.Background(), &cfg2))
	if got := canary.schedules.Running()[scheduleKey{"healthy", "s"}]; got != before {
		t.Error("an unchanged schedule was restarted")
	}
	if _, ok := canary.schedules.Running()[scheduleKey{"dead", "s"}]; ok {
		t.Error("a removed target's schedule still runs")
	}
	if got, want := canary.Running(), []config.Pair{{Target: "healthy", Scenario: "s", Interval: 100 * time.Millisecond}}; !slices.Equal(got, want) {
		t.Errorf("Running() = %v, want %v", got, want)
	}
}

func TestPhaseSpreadsPairs(t *testing.T) {
	interval := time.Minute
	seen := map[time.Duration]bool{}
	for _, name := range []string{"a", "b", "c", "d", "e", "f"} {
		p := phase(name, "s", interval)
		if p < 0 || p >= interval {
			t.Fatalf("phase %s outside the interval", p)
		}
		if p != phase(name, "s", interval) {
			t.Fatal("phase is not stable")
		}
		seen[p] = true
	}
	if len(seen) < 6 {
		t.Errorf("phases collide: %v", seen)
	}
}
