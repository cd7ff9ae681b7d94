package compare

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/internal/testkit"
	"github.com/llmprobe/llmprobe/lib/reconcile"
	"github.com/llmprobe/llmprobe/plan"
	"github.com/llmprobe/llmprobe/stats"
)

// pairsOf makes n pairs whose candidate's TPOT is the baseline's times
// shift, each side with its own log-normal noise (sd 10 %), seeded.
func pairsOf(n int, shift float64) []alwaysOnPair {
	rng := rand.New(rand.NewPCG(1, 2))
	noise := func() float64 { return math.Exp(0.1 * rng.NormFloat64()) }
	out := make([]alwaysOnPair, n)
	for i := range out {
		base := 0.02 * (1 + rng.Float64()) // requests differ more than the noise
		out[i] = alwaysOnPair{
			at:   time.Unix(int64(i), 0),
			base: alwaysOnSide{0.05 * noise(), base * noise(), base * noise(), 1 * noise()},
			cand: alwaysOnSide{0.05 * noise(), base * shift * noise(), base * noise(), 1 * noise()},
		}
	}
	return out
}

func figureOf(figs []decide.WindowFigure, metric, percentile string) (decide.WindowFigure, bool) {
	for _, f := range figs {
		if f.Metric == metric && f.Percentile == percentile {
			return f, true
		}
	}
	return decide.WindowFigure{}, false
}

// judgeOver feeds pairs to a fresh judge with a day's window a tick of 30 s
// apart, identities unchanged.
func judgeOver(pairs []alwaysOnPair, minPairs int) *judge {
	j := newJudge(24*time.Hour, 0.1, minPairs, 1)
	t0 := time.Unix(0, 0)
	j.begin(t0, identity{}, identity{})
	for i, p := range pairs {
		now := t0.Add(time.Duration(i) * 30 * time.Second)
		j.observe(now, identity{}, identity{})
		j.add(p, now)
	}
	return j
}

func TestJudgeDecides(t *testing.T) {
	for _, c := range []struct {
		name     string
		n        int
		shift    float64
		decision int
	}{
		{"40 % slower decode fails", 40, 1.4, decide.DecisionFail},
		{"30 % faster passes", 40, 0.7, decide.DecisionPass},
		{"5 % slower, with 10 % noise, is not yet shown within the tolerance", 40, 1.05, decide.DecisionUndecided},
		{"5 % slower passes on enough pairs", 400, 1.05, decide.DecisionPass},
		{"too few pairs: undecided", 12, 1.4, decide.DecisionUndecided},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := judgeOver(pairsOf(c.n, c.shift), 20)
			if got := j.ep.held[mTPOT].decision; got != c.decision {
				t.Errorf("tpot decision %d, want %d (counts %+v)", got, c.decision, j.ep.counts[mTPOT])
			}
			figs := j.figures()
			f, ok := figureOf(figs, "tpot", "p50")
			if !ok {
				t.Fatalf("no tpot p50 in %+v", figs)
			}
			// The interval the decision read: beyond the margin when
			// failed, inside it when passed, across it when undecided.
			margin := 1.1
			switch {
			case !f.Bounded:
			case c.decision == decide.DecisionFail && f.Lower <= margin,
				c.decision == decide.DecisionPass && f.Upper >= margin,
				c.decision == decide.DecisionUndecided && c.n >= 20 && (f.Lower > margin || f.Upper < margin):
				t.Errorf("tpot p50 %.3f in [%.3f, %.3f] against decision %d", f.Ratio, f.Lower, f.Upper, c.decision)
			}
			if f.Bounded && (f.Lower > c.shift || f.Upper < c.shift) {
				t.Errorf("tpot p50 [%.3f, %.3f] misses the truth %g", f.Lower, f.Upper, c.shift)
			}
			// The ITL moves with nothing here: never fails.
			if j.ep.held[mITL].decision == decide.DecisionFail {
				t.Errorf("itl failed: %+v", j.ep.counts[mITL])
			}
			// Tails only once the pairs suffice (36 for p90, 368 for p99).
			_, p90 := figureOf(figs, "tpot", "p90")
			_, p99 := figureOf(figs, "tpot", "p99")
			if p90 != (c.n >= 36) || p99 != (c.n >= 368) {
				t.Errorf("%d pairs: p90 %v, p99 %v", c.n, p90, p99)
			}
		})
	}
}

// A metric a pair did not measure (TPOT of one-token answers) has no
// figure and no say in the decision.
func TestJudgeAbsentMetric(t *testing.T) {
	pairs := pairsOf(60, 0.7)
	for i := range pairs {
		pairs[i].base[mTPOT] = math.NaN()
	}
	j := judgeOver(pairs, 20)
	figs := j.figures()
	if _, ok := figureOf(figs, "tpot", "p50"); ok {
		t.Errorf("tpot figure without a measured TPOT: %+v", figs)
	}
	if _, ok := figureOf(figs, "e2e", "p50"); !ok {
		t.Errorf("no e2e figure: %+v", figs)
	}
	if j.ep.counts[mTPOT] != (decide.SignCount{}) {
		t.Errorf("tpot counted: %+v", j.ep.counts[mTPOT])
	}
}

// An epoch starts afresh when its window has passed (a decided one once
// its decision was shown DecisionHold), and when a side's engine, version,
// model or server changes; a field learned or lost is no change.
func TestJudgeEpochs(t *testing.T) {
	t0 := time.Unix(0, 0)
	v11 := identity{engine: "vllm", version: "0.11.0", model: "m"}
	v12 := identity{engine: "vllm", version: "0.12.0", model: "m"}
	j := newJudge(10*time.Minute, 0.1, 6, 1)
	j.begin(t0, identity{model: "m"}, v11)
	if j.observe(t0.Add(time.Second), v11, v11) {
		t.Error("the baseline's engine learned: a new epoch")
	}
	if j.observe(t0.Add(2*time.Second), identity{model: "m"}, v11) || j.ep.base != v11 {
		t.Errorf("the baseline's version lost for a read: a new epoch, or forgotten (%v)", j.ep.base)
	}
	if !j.observe(t0.Add(3*time.Second), v11, v12) || j.ep.reason != reasonCandidate {
		t.Fatalf("the candidate's upgrade did not start an epoch: %+v", j.ep)
	}
	if want := "vllm 0.11.0, model m → vllm 0.12.0, model m"; j.ep.changed != want {
		t.Errorf("changed %q, want %q", j.ep.changed, want)
	}
	start := j.ep.start
	if j.observe(start.Add(10*time.Minute-time.Second), v11, v12) {
		t.Error("restarted before its window")
	}
	// Decided a minute before its window ends: it holds DecisionHold.
	for i, p := range pairsOf(30, 1.4) {
		j.add(p, start.Add(9*time.Minute+time.Duration(i)*time.Millisecond))
	}
	if j.ep.decision != decide.DecisionFail {
		t.Fatalf("not decided: %+v", j.ep.counts)
	}
	decided := j.ep.decidedAt
	if j.observe(decided.Add(DecisionHold-time.Second), v11, v12) {
		t.Error("a decision shown less than DecisionHold")
	}
	if !j.observe(decided.Add(DecisionHold), v11, v12) || j.ep.reason != reasonWindow || j.ep.decision != decide.DecisionUndecided || len(j.ep.pairs) != 0 {
		t.Errorf("no fresh epoch after the window and the hold: %+v", j.ep)
	}
	if j.epochs != [numReasons]float64{1, 1, 0, 1} {
		t.Errorf("epochs by reason %v", j.epochs)
	}
}

func TestSentence(t *testing.T) {
	at := time.Date(2026, 11, 29, 14, 7, 30, 0, time.UTC)
	var ep epoch
	ep.held[mTPOT] = heldDecision{decision: decide.DecisionFail, at: at}
	ep.held[mE2E] = heldDecision{decision: decide.DecisionPass, at: at}
	for _, c := range []struct {
		f    decide.WindowFigure
		want string
	}{
		{decide.WindowFigure{Metric: "tpot", Percentile: "p50", N: 16, Ratio: 1.312, Lower: 1.241, Upper: 1.38, Bounded: true, Sequence: true}, "TPOT p50 +31 % (sequence +24…+38 %), worse beyond 10 %, decided 14:07:30 UTC on 16 pairs"},
		{decide.WindowFigure{Metric: "e2e", Percentile: "p50", N: 40, Ratio: 0.8, Lower: 0.7, Upper: 0.9, Bounded: true, Sequence: true}, "E2E p50 −20 % (sequence −30…−10 %), within 10 %, decided 14:07:30 UTC on 40 pairs"},
		{decide.WindowFigure{Metric: "ttft", Percentile: "p50", N: 40, Ratio: 1.05, Lower: 0.8, Upper: 1.4, Bounded: true, Sequence: true}, "TTFT p50 +5 % (sequence −20…+40 %), undecided"},
		{decide.WindowFigure{Metric: "itl", Percentile: "p50", N: 3, Ratio: 1.5, Sequence: true}, "ITL p50 +50 %, too few pairs to bound"},
		{decide.WindowFigure{Metric: "ttft", Percentile: "p90", Ratio: 0.998, Lower: 0.95, Upper: 1.05, Bounded: true}, "TTFT p90 +0 % (95 % CI −5…+5 %), shown, not judged"},
	} {
		if got := sentence(c.f, ep, 0.1); got != c.want {
			t.Errorf("%+v:\n got %q\nwant %q", c.f, got, c.want)
		}
	}
}

// A window with enough pairs for every quantile exports MaxSeries, no more.
func TestFullWindowSeries(t *testing.T) {
	cfg := testkit.Config(t, `targets:
  - {name: a, url: "http://x:1"}
  - {name: b, url: "http://x:2"}
scenarios:
  - {name: s}
canary: {interval: 1s}
comparisons:
  - {name: ab, baseline: a, candidate: b}
`)
	p := cfg.ComparisonPairs()[0]
	s := &alwaysOnRun{cmp: p.Comparison, scenario: &plan.Scenario{Scenario: config.Scenario{Name: p.Scenario}}, interval: p.Interval, scenarios: 1}
	s.judge = judgeOver(pairsOf(stats.MinSamples(0.99), 1.4), p.Comparison.MinPairs)
	s.evaluated, s.figures = time.Now(), s.judge.figures()
	idle := func(ctx context.Context, _ alwaysOnKey, _ *alwaysOnRun) { <-ctx.Done() } // the epoch is set; no pair is sent
	r := &AlwaysOn{runs: reconcile.New(context.Background(), func(a, b *alwaysOnRun) bool { return a == b }, idle)}
	r.runs.Apply(map[alwaysOnKey]*alwaysOnRun{{p.Comparison.Name, p.Scenario}: s}, nil)
	defer r.runs.Stop(nil)
	if got, want := testutil.CollectAndCount(r), MaxSeries(cfg); got != want {
		lint, _ := testutil.CollectAndLint(r)
		t.Log(lint)
		t.Errorf("%d series from a full epoch, MaxSeries says %d", got, want)
	}
}

// One evaluation of the figures of an epoch of 6,000 pairs (at the
// default canary rate limit, 100 requests/s, two per pair, five compared
// scenarios share 10 pairs a second: 10 minutes of them): every metric's
// median with its sequence and p90 and p99 bootstraps.
func BenchmarkEvaluateFullWindow(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	pairs := make([]alwaysOnPair, 6000)
	for i := range pairs {
		for m := range numMetrics {
			v := 0.02 + rng.ExpFloat64()*0.01
			pairs[i].base[m], pairs[i].cand[m] = v, v*(1+rng.NormFloat64()*0.05)
		}
	}
	j := judgeOver(pairs, 20)
	for b.Loop() {
		j.figures()
	}
}

// One pair judged: four metrics counted and, while undecided, their
// evidence taken (the cost the judge adds to every pair).
func BenchmarkJudgeAdd(b *testing.B) {
	j := newJudge(time.Hour, 0.1, 20, 1)
	t0 := time.Unix(0, 0)
	j.begin(t0, identity{}, identity{})
	rng := rand.New(rand.NewPCG(1, 2))
	i := 0
	for b.Loop() {
		now := t0.Add(time.Duration(i) * 30 * time.Second)
		i++
		j.observe(now, identity{}, identity{})
		var p alwaysOnPair
		for m := range numMetrics {
			p.base[m], p.cand[m] = 1, math.Exp(0.3*rng.NormFloat64())
		}
		j.add(p, now)
	}
}
