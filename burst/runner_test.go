package burst

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/report/store"
	"github.com/llmprobe/llmprobe/sim"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// serialSim serves one request at a time: 20 ms to the first token and 20 ms
// per further token, so 5 tokens take 100 ms and capacity is exactly 10/s.
func serialSim(t *testing.T, maxBatch int) (*prober.Client, *sim.Engine) {
	t.Helper()
	srv, e := testkit.StartSim(t, func(c *sim.Config) {
		c.MaxBatch, c.MaxQueue = maxBatch, 10000
		c.PrefillBase, c.PrefillPerToken, c.DecodeBase, c.DecodePerSeq = 20*time.Millisecond, 0, 20*time.Millisecond, 0
	})
	target := testkit.Target(srv.URL, config.APICompletions)
	target.Timeout = config.Duration(30 * time.Second)
	c, err := prober.NewClient(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, e
}

func burstScenario() config.Scenario {
	s := testkit.Scenario()
	s.OutputTokens = config.Distribution{Kind: config.DistFixed, Value: 5}
	s.SLO = config.SLO{TTFT: config.Duration(100 * time.Millisecond), TargetRatio: 0.9}
	return s
}

func burstOf(process string, rate float64, d time.Duration) config.Burst {
	b := config.DefaultBurst
	b.Name, b.Target = "b", "t"
	b.Scenarios = []config.WeightedScenario{{Scenario: "s", Weight: 1}}
	b.Arrival = config.Arrival{Process: process, Rate: rate, Burstiness: 1}
	b.Duration = config.Duration(d)
	return b
}

func runAt(t *testing.T, c *prober.Client, b config.Burst) *report.Report {
	t.Helper()
	rep, err := Runner{Client: c}.Run(context.Background(), plan.BurstOf(b, burstScenario()))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// Open loop: past capacity the queue grows and latency with it, because
// requests keep coming at their planned times.
func TestOpenLoopShowsOverload(t *testing.T) {
	c, _ := serialSim(t, 1)
	under := runAt(t, c, burstOf(config.ArrivalPoisson, 5, 2*time.Second))
	over := runAt(t, c, burstOf(config.ArrivalPoisson, 20, 2*time.Second))
	u, o := under.Latency["ttft"].P99, over.Latency["ttft"].P99
	if o < 5*u || o < 0.5 {
		t.Errorf("p99 TTFT at half capacity %.3fs, at twice capacity %.3fs: overload does not show", u, o)
	}
	if over.AchievedRate == nil || *over.AchievedRate < 15 {
		t.Errorf("achieved rate %v at a planned 20/s: the prober held back (closed loop?)", over.AchievedRate)
	}
}

// The concurrency cap's waiting counts in latency, not in dispatch delay.
func TestConcurrencyCapWaitCounts(t *testing.T) {
	c, _ := serialSim(t, 64) // the server could take them all
	b := burstOf(config.ArrivalConstant, 20, 2*time.Second)
	b.MaxConcurrency = 1 // but the prober sends one at a time
	rep := runAt(t, c, b)
	if p99 := rep.Latency["ttft"].P99; p99 < 0.5 {
		t.Errorf("p99 TTFT %.3fs: the cap's waiting is missing from latency", p99)
	}
	if d := rep.Latency["dispatch_delay"].P99; d > 0.05 {
		t.Errorf("dispatch delay p99 %.3fs: cap waiting was charged to the prober", d)
	}
}

func TestWarmupExcluded(t *testing.T) {
	c, e := serialSim(t, 8)
	b := burstOf(config.ArrivalConstant, 50, 0)
	b.Duration, b.Requests, b.Warmup = 0, 10, config.Warmup{Requests: 5}
	out := Runner{Client: c}.runRate(context.Background(), plan.BurstOf(b, burstScenario()), 50)
	if len(out.Results) != 10 || out.Warmup != 5 || out.Planned != 10 {
		t.Fatalf("results %d, warmup %d, planned %d; want 10, 5, 10", len(out.Results), out.Warmup, out.Planned)
	}
	if got := e.Stats().Completed; got != 15 {
		t.Errorf("the sim completed %d requests, want 15 (warmup is sent)", got)
	}
	for _, r := range out.Results {
		if r.Sched.Before(out.Start) {
			t.Errorf("a result due at %s, before the measured start %s", r.Sched, out.Start)
		}
	}
}

// The safety brake stops a burst within its window once the target starts
// answering 503.
func TestSafetyBrake(t *testing.T) {
	c, e := serialSim(t, 64)
	b := burstOf(config.ArrivalConstant, 40, 20*time.Second)
	b.Brake = config.Brake{Window: config.Duration(time.Second), MaxRejectRatio: 0.5}
	flipped := make(chan time.Time, 1)
	go func() {
		time.Sleep(time.Second)
		_ = e.SetFaults(sim.Faults{ErrorRate: 1, ErrorStatus: 503})
		flipped <- time.Now()
	}()
	start := time.Now()
	out := Runner{Client: c}.runRate(context.Background(), plan.BurstOf(b, burstScenario()), 40)
	stopped := time.Now()
	at := <-flipped
	if !out.Aborted || !strings.Contains(out.AbortReason, "reject") {
		t.Fatalf("aborted=%v (%s), want the reject brake", out.Aborted, out.AbortReason)
	}
	if d := stopped.Sub(at); d > 2*time.Second {
		t.Errorf("stopped %s after the target began rejecting; the window is 1s", d)
	}
	if stopped.Sub(start) > 5*time.Second {
		t.Errorf("the burst ran %s of its 20s", stopped.Sub(start))
	}
	rep := report.Build(b, out, report.Meta{})
	report.Judge(rep, nil, b.MaxRegression)
	if rep.Passed || !rep.Aborted {
		t.Error("an aborted burst passed")
	}
}

// A sweep against a server of known capacity (10/s) finds the knee within one step.
func TestSweepFindsKnee(t *testing.T) {
	c, _ := serialSim(t, 1)
	b := burstOf(config.ArrivalConstant, 1, 3*time.Second)
	// A step passes when its goodput's lower bound reaches the target:
	// 12 requests all good reach 0.76, not 0.9. Resolution = Step: linear only.
	b.Sweep = &config.Sweep{Auto: &config.AutoSweep{Start: 4, Step: 2, Max: 16, TargetRatio: 0.5, Resolution: 2}}
	rep := runAt(t, c, b)
	if rep.MaxRateUnderSLO == nil {
		t.Fatalf("no rate met the SLO: %+v", rep.Sweep)
	}
	if got := *rep.MaxRateUnderSLO; got < 8 || got > 10 {
		t.Errorf("max rate under SLO = %g, want the knee at 10/s within one step: %+v", got, rep.Sweep)
	}
	last := rep.Sweep[len(rep.Sweep)-1]
	if last.Passed || last.Rate > *rep.MaxRateUnderSLO+2*2 {
		t.Errorf("the sweep did not stop at the first failing step: %+v", rep.Sweep)
	}
}

// hangAfterHeaders answers 200 with an event stream and then says nothing.
func hangAfterHeaders(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv
}

func clientOf(t *testing.T, url string, timeout time.Duration) *prober.Client {
	t.Helper()
	target := testkit.Target(url, config.APICompletions)
	target.Timeout = config.Duration(timeout)
	c, err := prober.NewClient(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// accounted checks that every planned request is in the report, sent or not.
func accounted(t *testing.T, rep *report.Report) {
	t.Helper()
	n := 0
	for _, c := range rep.Outcomes {
		n += c
	}
	for _, ns := range rep.NotSent {
		n += ns.Count
	}
	if n != rep.PlannedRequests || rep.Requests+n-rep.Requests != rep.PlannedRequests {
		t.Errorf("outcomes %v and not sent %v add up to %d of %d planned", rep.Outcomes, rep.NotSent, n, rep.PlannedRequests)
	}
}

// A server that hangs after its headers: the brake counts the requests in
// flight past their TTFT objective and stops the burst within its window;
// the requests already sent run to their deadline and count as timeouts.
func TestHangingServerIsBrakedAndCounted(t *testing.T) {
	c := clientOf(t, hangAfterHeaders(t).URL, 1500*time.Millisecond)
	b := burstOf(config.ArrivalConstant, 20, 10*time.Second)
	b.Brake = config.Brake{Window: config.Duration(time.Second), MaxSLOMissRatio: 0.5}
	rep, err := Runner{Client: c}.Run(context.Background(), plan.BurstOf(b, burstScenario()))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Aborted || !strings.Contains(rep.AbortReason, "SLO-miss") || !strings.Contains(rep.AbortReason, "in flight past their objective") {
		t.Fatalf("aborted %v: %s; want the SLO-miss brake on requests in flight", rep.Aborted, rep.AbortReason)
	}
	accounted(t, rep)
	// At 20/s the brake's minimum is 10 samples: the 10th request is overdue
	// 100 ms after it was due, half a second in; the window is 1 s.
	if rep.Requests > 20 || rep.Outcomes[prober.OutcomeTimeout] != rep.Requests {
		t.Errorf("%d requests sent, outcomes %v: want at most a window's worth, every one a timeout", rep.Requests, rep.Outcomes)
	}
	if rep.Goodput.Ratio == nil || *rep.Goodput.Ratio != 0 || rep.Latency["ttft"].Count != 0 {
		t.Errorf("goodput %v, TTFT samples %d: want 0 and none", rep.Goodput.Ratio, rep.Latency["ttft"].Count)
	}
	if len(rep.Failures) != 1 || rep.Failures[0].Phase != "stream" || rep.Failures[0].Reason != "deadline" || !strings.Contains(rep.Failures[0].Example, "0 output tokens in") {
		t.Errorf("failures %+v", rep.Failures)
	}
	if rep.Passed {
		t.Error("a braked burst passed")
	}
}

type inFlight struct{ n atomic.Int64 }

func (f *inFlight) Started(string, string, string)  { f.n.Add(1) }
func (f *inFlight) Finished(string, string, string) { f.n.Add(-1) }

// Stopping llmprobe mid-burst: the requests in flight are cancelled and
// counted as such, the rest are not sent, and the report is saved.
func TestShutdownCountsInFlightAndSaves(t *testing.T) {
	c := clientOf(t, hangAfterHeaders(t).URL, 30*time.Second)
	b := burstOf(config.ArrivalConstant, 10, 10*time.Second)
	store := store.New(t.TempDir(), nil)
	flying := &inFlight{}
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() {
		for flying.n.Load() < 3 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel(errors.New("llmprobe is shutting down"))
	}()
	rep, err := Runner{Client: c, Store: store, InFlight: flying}.Run(ctx, plan.BurstOf(b, burstScenario()))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Aborted || rep.AbortReason != "llmprobe is shutting down" {
		t.Errorf("aborted %v: %q", rep.Aborted, rep.AbortReason)
	}
	accounted(t, rep)
	if rep.Outcomes[prober.OutcomeCancelled] < 3 || len(rep.NotSent) != 1 || rep.NotSent[0].Reason != "llmprobe is shutting down" {
		t.Errorf("outcomes %v, not sent %v", rep.Outcomes, rep.NotSent)
	}
	if latest, err := store.Latest(b.Name); err != nil || latest == nil || latest.ID != rep.ID {
		t.Errorf("stored %v, %v; want the cut-short report %s", latest, err, rep.ID)
	}
}

// Two early transient errors do not stop a fast burst: the brake's minimum
// sample grows with the arrivals a window brings (here 40/s × 1 s ÷ 2 = 20).
func TestBrakeIgnoresTwoTransientErrors(t *testing.T) {
	srv, _ := testkit.StartSim(t, func(cfg *sim.Config) { cfg.PrefillBase, cfg.DecodeBase = 2*time.Millisecond, 2*time.Millisecond })
	var n atomic.Int64
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && n.Add(1) <= 2 {
			http.Error(w, "transient", http.StatusInternalServerError)
			return
		}
		testkit.Proxy(w, r, srv.URL)
	}))
	defer flaky.Close()
	c := clientOf(t, flaky.URL, 5*time.Second)
	b := burstOf(config.ArrivalConstant, 40, time.Second)
	b.Brake = config.Brake{Window: config.Duration(time.Second), MaxErrorRatio: 0.3}
	rep, err := Runner{Client: c}.Run(context.Background(), plan.BurstOf(b, burstScenario()))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Aborted || rep.Outcomes[prober.OutcomeHTTPError] != 2 {
		t.Errorf("aborted %v (%s), outcomes %v: two transient errors stopped the burst", rep.Aborted, rep.AbortReason, rep.Outcomes)
	}
}

// A salt gives the same requests new nonces: a run with the salt of an
// earlier run finds its prompts in the engine's prefix cache, a run with
// another salt does not. Measured gets each run's results in plan order.
func TestSaltAndMeasured(t *testing.T) {
	srv, _ := testkit.StartSim(t, func(c *sim.Config) { c.PrefixCacheTokens = 1 << 20 })
	c, err := prober.NewClient(testkit.Target(srv.URL, config.APICompletions))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := burstScenario()
	s.PromptTokens = config.Distribution{Kind: config.DistFixed, Value: 64}
	b := burstOf(config.ArrivalPoisson, 50, 0)
	b.Duration, b.Requests = 0, 10
	cached := func(salt uint64) int {
		var run report.Run
		r := Runner{Client: c, Salt: salt, Measured: func(m report.Run) { run = m }}
		if _, err := r.Run(context.Background(), plan.BurstOf(b, s)); err != nil {
			t.Fatal(err)
		}
		if len(run.Results) != 10 || run.Index[0] != 0 || run.Index[9] != 9 {
			t.Fatalf("measured %d results, index %v", len(run.Results), run.Index)
		}
		n := 0
		for _, res := range run.Results {
			n += res.CachedPromptTokens
		}
		return n
	}
	if n := cached(1); n != 0 {
		t.Errorf("first run with salt 1: %d cached prompt tokens", n)
	}
	if n := cached(1); n < 10*48 {
		t.Errorf("salt 1 again: %d cached prompt tokens, want most of 10 × 64", n)
	}
	if n := cached(2); n != 0 {
		t.Errorf("salt 2: %d cached prompt tokens", n)
	}
}
