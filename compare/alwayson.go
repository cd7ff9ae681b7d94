// Always-on comparisons (canary analysis): each tick one prompt to a baseline
// and a candidate at the same moment, the pairs of an epoch judged metric by
// metric by a rule valid however often it is looked at.

package compare

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/lib/clock"
	"github.com/llmprobe/llmprobe/lib/reconcile"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/prober"
)

// Traffic is the `traffic` of the comparison's requests.
const Traffic = prober.TrafficComparison

// EvaluateEvery is the shortest time between two evaluations of the
// figures shown to people (the tails' bootstraps): the decisions are taken
// on every pair, these not on each scrape or pair.
const EvaluateEvery = 15 * time.Second

// AlwaysOn runs one schedule per (comparison, scenario) and exports what
// they find (it is a prometheus.Collector).
type AlwaysOn struct {
	logger   log.Logger
	observer prober.Observer
	inFlight prober.InFlight

	// every is EvaluateEvery; tests shorten it.
	every time.Duration

	runs *reconcile.Set[alwaysOnKey, *alwaysOnRun]
}

type alwaysOnKey struct{ comparison, scenario string }

// alwaysOnRun is one (comparison, scenario): its schedule and its judge.
type alwaysOnRun struct {
	cmp        config.Comparison
	scenario   *plan.Scenario
	interval   time.Duration
	base, cand *prober.Client
	// scenarios the comparison compares: the day's error rate is split over them.
	scenarios int

	mu        sync.Mutex
	judge     *judge
	evaluated time.Time
	figures   []decide.WindowFigure
	results   [numResults]float64
}

// How a tick's pair ended, the `result` of llmprobe_comparison_pairs_total.
const (
	resMeasured = iota
	resBaselineFailed
	resCandidateFailed
	resBothFailed
	numResults
)

var resultLabels = [numResults]string{"measured", "baseline_failed", "candidate_failed", "both_failed"}

// NewAlwaysOn returns a Runner whose schedules live until ctx ends. Every
// request is given to observer and counted in inFlight.
func NewAlwaysOn(ctx context.Context, logger log.Logger, observer prober.Observer, inFlight prober.InFlight) *AlwaysOn {
	r := &AlwaysOn{every: EvaluateEvery, logger: logger, observer: observer, inFlight: inFlight}
	r.runs = reconcile.New(ctx, (*alwaysOnRun).same, func(ctx context.Context, _ alwaysOnKey, s *alwaysOnRun) { r.loop(ctx, s) })
	return r
}

// Apply brings the schedules in line with cfg: removed ones stop with
// their series, new ones start, changed ones start again with an empty window.
func (r *AlwaysOn) Apply(pl *plan.Plan, clients map[string]*prober.Client) {
	cfg := pl.Config
	want := map[alwaysOnKey]*alwaysOnRun{}
	pairs := cfg.ComparisonPairs()
	scenarios := map[string]int{}
	for _, p := range pairs {
		scenarios[p.Comparison.Name]++
	}
	for _, p := range pairs {
		base, cand := clients[p.Comparison.Baseline], clients[p.Comparison.Candidate]
		if base == nil || cand == nil {
			continue // its client could not be built, or --shard left it out
		}
		sc, _ := pl.Scenario(p.Scenario)
		n := scenarios[p.Comparison.Name]
		want[alwaysOnKey{p.Comparison.Name, p.Scenario}] = &alwaysOnRun{cmp: p.Comparison, scenario: sc, interval: p.Interval, base: base, cand: cand, scenarios: n,
			judge: newJudge(p.Comparison.Window.Std(), p.Comparison.Tolerance, p.Comparison.MinPairs, n)}
	}
	r.runs.Apply(want, nil)
}

func (s *alwaysOnRun) same(o *alwaysOnRun) bool {
	return s.base == o.base && s.cand == o.cand && s.interval == o.interval && s.scenarios == o.scenarios && config.Equal(s.cmp, o.cmp) && config.Equal(s.scenario, o.scenario)
}

// Stop ends every schedule and waits for their requests.
func (r *AlwaysOn) Stop() { r.runs.Stop(nil) }

// loop sends a pair every interval until ctx ends.
func (r *AlwaysOn) loop(ctx context.Context, s *alwaysOnRun) {
	prompts := s.scenario.Builder(rand.Uint64())
	s.mu.Lock()
	s.judge.begin(time.Now(), identityOf(s.base), identityOf(s.cand))
	s.mu.Unlock()
	var reqs sync.WaitGroup
	defer reqs.Wait()
	tick := time.Now()
	pacer := clock.NewPacer()
	defer pacer.Close()
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	for {
		// Each pair at a random moment of its interval: the canaries' fixed
		// rhythm on either target then overlaps both sides alike.
		sched := tick.Add(time.Duration(rng.Int64N(int64(s.interval))))
		if !pacer.Until(ctx, sched) {
			return
		}
		req := prober.Request{Scenario: s.scenario.Scenario, Traffic: Traffic, Sched: sched}
		req.Prompt, req.MaxTokens = prompts.Next()
		candFirst := rng.IntN(2) == 1
		reqs.Add(1)
		go func() {
			defer reqs.Done()
			r.tick(ctx, s, req, candFirst)
		}()
		tick = tick.Add(s.interval)
		if behind := time.Since(tick); behind > s.interval {
			tick = tick.Add(behind.Truncate(s.interval)) // starved: skip, never a salvo
		}
	}
}

// tick sends req to both targets at once and adds the pair to the window.
// Which side starts first is a coin flip per pair: the scheduler runs the
// newest goroutine first, and a fixed order would give one side every
// dispatch delay, a bias no number of pairs averages away.
func (r *AlwaysOn) tick(ctx context.Context, s *alwaysOnRun, req prober.Request, candFirst bool) {
	var base, cand *prober.Result
	var both sync.WaitGroup
	both.Add(2)
	first := func() { defer both.Done(); base = r.do(ctx, s.base, req) }
	second := func() { defer both.Done(); cand = r.do(ctx, s.cand, req) }
	if candFirst {
		first, second = second, first
	}
	go first()
	go second()
	both.Wait()
	if ctx.Err() != nil {
		return // stopped by a reload or shutdown: no pair
	}
	for _, res := range []*prober.Result{base, cand} {
		r.observer.Observe(res)
		if res.Outcome != prober.OutcomeSuccess {
			level.Debug(r.logger).Log("msg", "comparison probe failed", "comparison", s.cmp.Name, "target", res.Target, "scenario", s.scenario.Name, "outcome", res.Outcome, "err", res.Error)
		}
	}
	if ep := s.add(base, cand, identityOf(s.base), identityOf(s.cand), time.Now(), r.every); ep != nil {
		level.Info(r.logger).Log("msg", "comparison epoch started afresh", "comparison", s.cmp.Name, "scenario", s.scenario.Name, "why", ep.why(s.cmp.Window.Std()))
	}
}

func (r *AlwaysOn) do(ctx context.Context, c *prober.Client, req prober.Request) *prober.Result {
	name := c.Target().Name
	r.inFlight.Started(name, req.Scenario.Name, Traffic)
	defer r.inFlight.Finished(name, req.Scenario.Name, Traffic)
	return c.Do(ctx, req)
}

// add gives the judge the sides' identities and, when both measured, the
// pair; counts every pair; and evaluates the figures for people when every
// has passed since the last evaluation. It returns the new epoch when one
// started.
func (s *alwaysOnRun) add(base, cand *prober.Result, baseID, candID identity, now time.Time, every time.Duration) (started *epoch) {
	bOK, cOK := base.Outcome == prober.OutcomeSuccess, cand.Outcome == prober.OutcomeSuccess
	s.mu.Lock()
	if s.judge.observe(now, baseID, candID) {
		ep := s.judge.ep
		started = &ep
		s.evaluated = time.Time{} // the old epoch's figures are not the new one's
	}
	switch {
	case bOK && cOK:
		s.results[resMeasured]++
		if s.judge.add(alwaysOnPair{at: base.Sched, base: sideOf(base), cand: sideOf(cand)}, now) {
			s.evaluated = time.Time{} // the figures show what was decided at once
		}
	case cOK:
		s.results[resBaselineFailed]++
	case bOK:
		s.results[resCandidateFailed]++
	default:
		s.results[resBothFailed]++
	}
	if !s.evaluated.IsZero() && now.Sub(s.evaluated) < every {
		s.mu.Unlock()
		return started
	}
	s.evaluated = now
	j := *s.judge
	j.ep.pairs = slices.Clone(j.ep.pairs)
	s.mu.Unlock()
	// Judged outside the lock: a scrape never waits for a bootstrap.
	figures := j.figures()
	s.mu.Lock()
	if s.judge.ep.start.Equal(j.ep.start) {
		s.figures = figures
	}
	s.mu.Unlock()
	return started
}
