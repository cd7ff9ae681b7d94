package burst

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/lib/clock"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/prompt"
	"github.com/llmprobe/llmprobe/sim"
)

// fastSim is a chat sim that answers in a few milliseconds, failing each
// request with errorRate; posts counts the requests that reached it.
func fastSim(t *testing.T, errorRate float64) (c *prober.Client, posts *atomic.Int64) {
	t.Helper()
	srv, _ := testkit.StartSim(t, func(c *sim.Config) {
		c.MaxBatch, c.PrefillBase, c.DecodeBase = 64, time.Millisecond, time.Millisecond
		c.Faults.ErrorRate, c.Faults.ErrorStatus = errorRate, http.StatusInternalServerError
	})
	posts = &atomic.Int64{}
	counting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
		testkit.Proxy(w, r, srv.URL)
	}))
	t.Cleanup(counting.Close)
	c, err := prober.NewClient(testkit.Target(counting.URL, config.APIChat))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, posts
}

// sessionScenario is scenario "c": three turns, no think time.
func sessionScenario() config.Scenario {
	s := burstScenario()
	s.Name = "c"
	s.Conversation = &config.Conversation{Turns: 3}
	return s
}

// mixBurst plans one request of scenario "s" or "c" (a session), drawn
// half and half; its seed draws the session, so the plan's total is 3.
func mixBurst() config.Burst {
	b := burstOf(config.ArrivalConstant, 10, 0)
	b.Requests = 1
	b.Scenarios = []config.WeightedScenario{{Scenario: "s", Weight: 1}, {Scenario: "c", Weight: 1}}
	return b
}

// newTestDispatcher readies a dispatcher of mixBurst, whose scenario 0 is a
// single request and 1 a session, against c; it starts nothing.
func newTestDispatcher(t *testing.T, ctx context.Context, r Runner, b config.Burst) *dispatcher {
	t.Helper()
	d := newDispatcher(ctx, r, plan.BurstOf(b, burstScenario(), sessionScenario()), 10)
	t.Cleanup(func() { d.stopSending(nil) })
	return d
}

func TestDispatcherCount(t *testing.T) {
	single, session := plan.Arrival{Scenario: 0}, plan.Arrival{Scenario: 1}
	warm := func(a plan.Arrival) plan.Arrival { a.Warmup = true; return a }
	for _, tc := range []struct {
		name                   string
		arrivals               []plan.Arrival
		planned, warmup, total int
	}{
		{"one request", []plan.Arrival{single}, 1, 0, 3},
		{"a session plans its turns", []plan.Arrival{session}, 3, 0, 3},
		{"warmup apart, the total grows", []plan.Arrival{warm(single), session, single}, 4, 1, 5},
		{"a warmup session", []plan.Arrival{warm(session)}, 0, 3, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := fastSim(t, 0)
			d := newTestDispatcher(t, context.Background(), Runner{Client: c}, mixBurst())
			if d.total.Load() != 3 {
				t.Fatalf("progress counts to %d before the plan is drawn, want the plan's 3", d.total.Load())
			}
			for _, a := range tc.arrivals {
				d.count(a)
			}
			if d.planned != tc.planned || d.warmup != tc.warmup || int(d.total.Load()) != tc.total || d.arrivals != len(tc.arrivals) {
				t.Errorf("planned %d, warmup %d, total %d, arrivals %d; want %d, %d, %d, %d",
					d.planned, d.warmup, d.total.Load(), d.arrivals, tc.planned, tc.warmup, tc.total, len(tc.arrivals))
			}
		})
	}
}

func TestDispatcherNotSent(t *testing.T) {
	for _, tc := range []struct {
		name   string
		a      plan.Arrival
		n      int
		reason string
		want   map[string]int
	}{
		{"a measured request", plan.Arrival{}, 1, "cancelled", map[string]int{"cancelled": 1}},
		{"a session's turns left", plan.Arrival{Scenario: 1}, 2, prober.ReasonEarlierTurnFailed, map[string]int{prober.ReasonEarlierTurnFailed: 2}},
		{"warmup is not in the run", plan.Arrival{Warmup: true}, 1, "cancelled", map[string]int{}},
		{"nothing left adds no reason", plan.Arrival{Scenario: 1}, 0, "cancelled", map[string]int{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := fastSim(t, 0)
			d := newTestDispatcher(t, context.Background(), Runner{Client: c}, mixBurst())
			d.notSent(tc.a, tc.n, tc.reason)
			if !maps.Equal(d.out.NotSent, tc.want) {
				t.Errorf("not sent %v, want %v", d.out.NotSent, tc.want)
			}
		})
	}
}

// releaseAt releases an arrival once due, or counts it as not sent, with
// why sending stopped. No worker may start here, so what it released
// stays in the queue to be looked at.
func TestDispatcherReleaseAt(t *testing.T) {
	for _, tc := range []struct {
		name    string
		stop    func(parent context.CancelCauseFunc, d *dispatcher)
		a       plan.Arrival
		want    map[string]int
		release bool
	}{
		{"due", nil, plan.Arrival{At: time.Millisecond, Index: 4}, map[string]int{}, true},
		{"braked", func(_ context.CancelCauseFunc, d *dispatcher) { d.stopSending(errors.New("safety brake: test")) },
			plan.Arrival{Scenario: 1}, map[string]int{"safety brake: test": 3}, false},
		{"shut down", func(parent context.CancelCauseFunc, _ *dispatcher) { parent(errors.New("llmprobe is shutting down")) },
			plan.Arrival{}, map[string]int{"llmprobe is shutting down": 1}, false},
		{"cancelled", func(parent context.CancelCauseFunc, _ *dispatcher) { parent(nil) },
			plan.Arrival{}, map[string]int{"cancelled": 1}, false},
		{"a stopped warmup is not in the run", func(parent context.CancelCauseFunc, _ *dispatcher) { parent(nil) },
			plan.Arrival{Warmup: true}, map[string]int{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := fastSim(t, 0)
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			d := newTestDispatcher(t, ctx, Runner{Client: c}, mixBurst())
			d.maxWorkers = 0
			if tc.stop != nil {
				tc.stop(cancel, d)
			}
			pacer := clock.NewPacer()
			defer pacer.Close()
			d.releaseAt(tc.a, pacer)
			if !maps.Equal(d.out.NotSent, tc.want) {
				t.Errorf("not sent %v, want %v", d.out.NotSent, tc.want)
			}
			if len(d.queue) != map[bool]int{false: 0, true: 1}[tc.release] {
				t.Fatalf("%d jobs released, want released %v", len(d.queue), tc.release)
			}
			if !tc.release {
				return
			}
			j := <-d.queue
			if j.arrival != tc.a || j.released.Before(d.start.Add(tc.a.At)) {
				t.Errorf("released %+v at %s, before it was due at %s", j.arrival, j.released, d.start.Add(tc.a.At))
			}
		})
	}
}

// hangingSim holds every request it gets until the client gives up, and
// says on arrived when one came.
func hangingSim(t *testing.T) (*prober.Client, <-chan struct{}) {
	arrived := make(chan struct{}, 64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		arrived <- struct{}{}
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return clientOf(t, srv.URL, time.Minute), arrived
}

// Workers start as jobs find none idle, up to max_concurrency; the rest wait
// in the queue, and those still waiting when the run is stopped are not sent.
func TestDispatcherReleaseStartsWorkersUpToTheCap(t *testing.T) {
	for _, tc := range []struct{ cap, jobs int }{{1, 3}, {2, 4}, {8, 3}} {
		t.Run(fmt.Sprintf("cap %d, %d jobs", tc.cap, tc.jobs), func(t *testing.T) {
			c, arrived := hangingSim(t)
			ctx, cancel := context.WithCancelCause(context.Background())
			b := mixBurst()
			b.MaxConcurrency, b.Requests = tc.cap, tc.jobs
			d := newTestDispatcher(t, ctx, Runner{Client: c}, b)
			for i := range tc.jobs {
				d.release(job{arrival: plan.Arrival{Index: i}, released: time.Now()})
			}
			sending := min(tc.cap, tc.jobs)
			for range sending {
				<-arrived // each worker holds one job in flight
			}
			if d.workers != sending {
				t.Errorf("%d workers for %d jobs under a cap of %d, want %d", d.workers, tc.jobs, tc.cap, sending)
			}
			cancel(errors.New("stop"))
			d.drain(func() {})
			out := d.result()
			if len(arrived) != 0 {
				t.Errorf("%d more requests reached the server after the stop", len(arrived))
			}
			want := map[string]int{}
			if left := tc.jobs - sending; left > 0 {
				want["stop"] = left
			}
			if len(out.Results) != sending || !maps.Equal(out.NotSent, want) {
				t.Errorf("%d results, not sent %v; want %d and %d for the stop", len(out.Results), out.NotSent, sending, tc.jobs-sending)
			}
			for _, r := range out.Results {
				if r.Outcome != prober.OutcomeCancelled {
					t.Errorf("a request in flight at the stop ended %s, want cancelled", r.Outcome)
				}
			}
		})
	}
}

// request builds each arrival's first request: due at its planned time, a
// trace's lengths clamped to the scenario's, a session's prompt left to it.
func TestDispatcherRequest(t *testing.T) {
	c, _ := fastSim(t, 0)
	released := time.Now()
	for _, tc := range []struct {
		name  string
		a     plan.Arrival
		trace bool
		want  func(b *prompt.Builder) (prompt.Prompt, int)
	}{
		{"synthetic", plan.Arrival{At: time.Second, Index: 7}, false, func(b *prompt.Builder) (prompt.Prompt, int) { return b.At(7) }},
		{"a session's", plan.Arrival{At: time.Second, Scenario: 1, Index: 7}, false, func(*prompt.Builder) (prompt.Prompt, int) { return prompt.Prompt{}, 0 }},
		{"a trace's, clamped", plan.Arrival{Index: 3, Input: 1 << 20, Output: 2}, true, func(b *prompt.Builder) (prompt.Prompt, int) {
			return b.Sized(3, burstScenario().PromptTokens.Maximum(), nil, 0), 2
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newTestDispatcher(t, context.Background(), Runner{Client: c}, mixBurst())
			if tc.trace {
				d.trace = &traceStats{}
			}
			req := d.request(job{arrival: tc.a, released: released})
			wantPrompt, wantMax := tc.want(d.builders[tc.a.Scenario])
			if req.Scenario.Name != d.burst.Mix[tc.a.Scenario].Name || req.Traffic != prober.TrafficBurst ||
				!req.Sched.Equal(d.start.Add(tc.a.At)) || !req.Released.Equal(released) {
				t.Errorf("request of scenario %s, traffic %s, due %s, released %s; want %s, burst, %s, %s",
					req.Scenario.Name, req.Traffic, req.Sched, req.Released, d.burst.Mix[tc.a.Scenario].Name, d.start.Add(tc.a.At), released)
			}
			if !reflect.DeepEqual(req.Prompt, wantPrompt) || req.MaxTokens != wantMax {
				t.Errorf("prompt of %d tokens, max_tokens %d; want %d and %d", req.Prompt.RequestedTokens, req.MaxTokens, wantPrompt.RequestedTokens, wantMax)
			}
			if tc.trace && d.trace.out.ClampedPrompt != 1 {
				t.Errorf("%d prompts clamped, want 1", d.trace.out.ClampedPrompt)
			}
		})
	}
}

// handle sends a released arrival: one request or a session's turns, what a
// failure or a stop leaves counted as not sent.
func TestDispatcherHandle(t *testing.T) {
	const (
		queued  = "while it waited for a slot"
		between = "as its first answer came"
	)
	for _, tc := range []struct {
		name      string
		a         plan.Arrival
		errorRate float64
		stop      string // when the brake fires, if it does
		completed int    // requests the server got
		results   int    // measured
		notSent   map[string]int
	}{
		{"one request", plan.Arrival{}, 0, "", 1, 1, map[string]int{}},
		{"a session", plan.Arrival{Scenario: 1}, 0, "", 3, 3, map[string]int{}},
		{"a failed turn ends its session", plan.Arrival{Scenario: 1}, 1, "", 1, 1, map[string]int{prober.ReasonEarlierTurnFailed: 2}},
		{"a warmup session is sent, not measured", plan.Arrival{Scenario: 1, Warmup: true}, 1, "", 1, 0, map[string]int{}},
		{"stopped " + queued, plan.Arrival{Scenario: 1}, 0, queued, 0, 0, map[string]int{"safety brake: test": 3}},
		{"stopped between turns", plan.Arrival{Scenario: 1}, 0, between, 1, 1, map[string]int{"safety brake: test": 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, posts := fastSim(t, tc.errorRate)
			r := Runner{Client: c}
			first := &stopOnFirst{}
			if tc.stop == between {
				r.Observer = first
			}
			d := newTestDispatcher(t, context.Background(), r, mixBurst())
			first.stop = func() { d.stopSending(errors.New("safety brake: test")) }
			if tc.stop == queued {
				first.stop()
			}
			d.handle(job{arrival: tc.a, released: time.Now()})
			if got := int(posts.Load()); got != tc.completed {
				t.Errorf("the server got %d requests, want %d", got, tc.completed)
			}
			if len(d.out.Results) != tc.results || d.done != tc.completed || !maps.Equal(d.out.NotSent, tc.notSent) {
				t.Errorf("%d results, %d done, not sent %v; want %d, %d, %v", len(d.out.Results), d.done, d.out.NotSent, tc.results, tc.completed, tc.notSent)
			}
		})
	}
}

// stopOnFirst calls stop when it observes a result.
type stopOnFirst struct{ stop func() }

func (s *stopOnFirst) Observe(*prober.Result) { s.stop() }

type inFlightLog struct {
	mu                sync.Mutex
	started, finished []string
}

func (l *inFlightLog) Started(target, scenario, traffic string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.started = append(l.started, target+"/"+scenario+"/"+traffic)
}

func (l *inFlightLog) Finished(target, scenario, traffic string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.finished = append(l.finished, target+"/"+scenario+"/"+traffic)
}

// send tells the in-flight count and the brake about every request: here a
// brake whose minimum is one sample stops the sending on the first error.
func TestDispatcherSend(t *testing.T) {
	for _, tc := range []struct {
		name      string
		errorRate float64
		outcome   prober.Outcome
		braked    bool
	}{
		{"success", 0, prober.OutcomeSuccess, false},
		{"an error brakes", 1, prober.OutcomeHTTPError, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := fastSim(t, tc.errorRate)
			log := &inFlightLog{}
			b := mixBurst()
			b.Brake = config.Brake{Window: config.Duration(time.Minute), MinSamples: 1, MaxErrorRatio: 0.5}
			d := newTestDispatcher(t, context.Background(), Runner{Client: c, InFlight: log}, b)
			req := d.request(job{arrival: plan.Arrival{Index: 2}, released: time.Now()})
			res := d.send(2, req)
			if res.Outcome != tc.outcome {
				t.Fatalf("outcome %s (%s), want %s", res.Outcome, res.Error, tc.outcome)
			}
			want := []string{"t/s/" + prober.TrafficBurst}
			if !reflect.DeepEqual(log.started, want) || !reflect.DeepEqual(log.finished, want) {
				t.Errorf("in flight: started %v, finished %v; want %v each", log.started, log.finished, want)
			}
			if len(d.brake.inFlight) != 0 || len(d.brake.recent) != 1 {
				t.Errorf("the brake holds %d in flight and %d samples, want 0 and 1", len(d.brake.inFlight), len(d.brake.recent))
			}
			if braked := d.sending.Err() != nil; braked != tc.braked || braked && !strings.Contains(stopReason(d.sending), "error ratio") {
				t.Errorf("braked %v (%q), want %v", braked, stopReason(d.sending), tc.braked)
			}
		})
	}
}

// record counts every answer for progress and every success's tokens; only
// measured results go to the run and the observer.
func TestDispatcherRecord(t *testing.T) {
	for _, tc := range []struct {
		name                       string
		a                          plan.Arrival
		res                        prober.Result
		results, tokens, observers int
	}{
		{"measured", plan.Arrival{Index: 5}, prober.Result{Outcome: prober.OutcomeSuccess, OutputTokens: 7}, 1, 7, 1},
		{"warmup", plan.Arrival{Index: 5, Warmup: true}, prober.Result{Outcome: prober.OutcomeSuccess, OutputTokens: 7}, 0, 7, 0},
		{"a failure's tokens", plan.Arrival{Index: 5}, prober.Result{Outcome: prober.OutcomeStreamError, OutputTokens: 7}, 1, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := fastSim(t, 0)
			var progress [][2]int
			seen := &collect{}
			r := Runner{Client: c, Observer: seen, Progress: func(done, total int) { progress = append(progress, [2]int{done, total}) }}
			d := newTestDispatcher(t, context.Background(), r, mixBurst())
			d.record(tc.a, &tc.res)
			if len(d.out.Results) != tc.results || d.allTokens != tc.tokens || len(seen.results) != tc.observers {
				t.Errorf("%d results, %d tokens, %d observed; want %d, %d, %d", len(d.out.Results), d.allTokens, len(seen.results), tc.results, tc.tokens, tc.observers)
			}
			if len(d.out.Results) == 1 && (d.out.Index[0] != 5 || d.out.Results[0] != &tc.res) {
				t.Errorf("recorded arrival %d's %+v, want arrival 5's result", d.out.Index[0], d.out.Results[0])
			}
			if !reflect.DeepEqual(progress, [][2]int{{1, 3}}) {
				t.Errorf("progress %v, want 1 of the plan's 3", progress)
			}
		})
	}
}

// The brake's ticks see a request in flight past its objective although
// nothing ends: the sending stops on them alone.
func TestDispatcherTickBrake(t *testing.T) {
	c, _ := fastSim(t, 0)
	b := mixBurst()
	b.Brake = config.Brake{Window: config.Duration(100 * time.Millisecond), MinSamples: 1, MaxSLOMissRatio: 0.5}
	d := newTestDispatcher(t, context.Background(), Runner{Client: c}, b)
	d.brake.started(1, time.Now().Add(-time.Second))
	stop := d.tickBrake()
	<-d.sending.Done()
	stop()
	if reason := stopReason(d.sending); !strings.Contains(reason, "in flight past their objective") {
		t.Errorf("stopped for %q, want the SLO-miss brake on the request in flight", reason)
	}

	off := newTestDispatcher(t, context.Background(), Runner{Client: c}, mixBurst())
	off.brake.started(1, time.Now().Add(-time.Second))
	off.tickBrake()() // no brake configured: nothing ticks
	if off.sending.Err() != nil {
		t.Errorf("a burst without a brake stopped: %s", stopReason(off.sending))
	}
}

// result gives the measured results in plan order, a session's turns in
// turn order, and why the run stopped.
func TestDispatcherResult(t *testing.T) {
	c, _ := fastSim(t, 0)
	for _, tc := range []struct {
		name    string
		stop    error
		trace   bool
		aborted string
	}{
		{"ran to its end", nil, false, ""},
		{"braked", errors.New("safety brake: test"), false, "safety brake: test"},
		{"a trace's records", nil, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newTestDispatcher(t, context.Background(), Runner{Client: c}, mixBurst())
			if tc.trace {
				d.trace = &traceStats{}
			}
			at := func(s time.Duration) time.Time { return d.start.Add(s * time.Second) }
			for _, a := range []plan.Arrival{{Index: 3}, {Index: 1, Scenario: 1}, {Index: 0, Warmup: true}} {
				d.count(a)
			}
			d.record(plan.Arrival{Index: 3}, &prober.Result{Turn: 1, Sched: at(3), E2E: time.Second, Outcome: prober.OutcomeSuccess, OutputTokens: 2})
			d.record(plan.Arrival{Index: 1}, &prober.Result{Turn: 2, Sched: at(2), E2E: time.Second, Outcome: prober.OutcomeSuccess, OutputTokens: 3})
			d.record(plan.Arrival{Index: 1}, &prober.Result{Turn: 1, Sched: at(1), E2E: time.Second, Outcome: prober.OutcomeSuccess, OutputTokens: 5})
			d.record(plan.Arrival{Index: 0, Warmup: true}, &prober.Result{Turn: 1, Outcome: prober.OutcomeSuccess, OutputTokens: 11})
			if tc.stop != nil {
				d.stopSending(tc.stop)
			}
			d.drain(func() {})
			out := d.result()
			var order [][2]int
			for i, r := range out.Results {
				order = append(order, [2]int{out.Index[i], r.Turn})
			}
			if want := [][2]int{{1, 1}, {1, 2}, {3, 1}}; !reflect.DeepEqual(order, want) {
				t.Errorf("results (arrival, turn) %v, want %v", order, want)
			}
			if out.Aborted != (tc.aborted != "") || out.AbortReason != tc.aborted {
				t.Errorf("aborted %v (%q), want %q", out.Aborted, out.AbortReason, tc.aborted)
			}
			if out.AllOutputTokens != 21 || out.Planned != 4 || out.Warmup != 1 || !out.Start.Equal(at(1)) || !out.End.Equal(at(4)) {
				t.Errorf("tokens %d, planned %d, warmup %d, span %s to %s; want 21, 4, 1, +1s to +4s",
					out.AllOutputTokens, out.Planned, out.Warmup, out.Start.Sub(d.start), out.End.Sub(d.start))
			}
			if tc.trace != (out.Trace != nil) || tc.trace && out.Trace.Records != 3 {
				t.Errorf("trace %+v, want 3 records for a trace, none otherwise", out.Trace)
			}
		})
	}
}
