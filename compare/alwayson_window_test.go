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

func TestEvaluate(t *testing.T) {
	for _, c := range []struct {
		name    string
		n       int
		shift   float64
		judged  bool
		verdict int
	}{
		{"40 % slower decode is worse", 40, 1.4, true, decide.WindowWorse},
		{"the same speed is no difference", 40, 1, true, decide.WindowNone},
		{"30 % faster is better", 40, 0.7, true, decide.WindowBetter},
		{"5 % slower is within the tolerance", 400, 1.05, true, decide.WindowNone},
		{"too few pairs: no verdict", 12, 1.4, false, decide.WindowNone},
	} {
		t.Run(c.name, func(t *testing.T) {
			figs := evaluate(pairsOf(c.n, c.shift), 20, 0.1)
			f, ok := figureOf(figs, "tpot", "p50")
			if !ok {
				t.Fatalf("no tpot p50 in %+v", figs)
			}
			if f.N != c.n || f.Judged != c.judged || f.Verdict != c.verdict {
				t.Errorf("tpot p50: %+v, want judged %v verdict %d", f, c.judged, c.verdict)
			}
			if !f.Bounded || f.Lower > f.Ratio || f.Ratio > f.Upper || f.Lower > c.shift || f.Upper < c.shift {
				t.Errorf("tpot p50: ratio %.3f in [%.3f, %.3f] should hold %g", f.Ratio, f.Lower, f.Upper, c.shift)
			}
			// The ITL moves with nothing here: never worse.
			if itl, _ := figureOf(figs, "itl", "p50"); itl.Verdict == decide.WindowWorse {
				t.Errorf("itl: %+v", itl)
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

// A metric a pair did not measure (TPOT of one-token answers) has no figure.
func TestEvaluateAbsentMetric(t *testing.T) {
	pairs := pairsOf(30, 1)
	for i := range pairs {
		pairs[i].base[mTPOT] = math.NaN()
	}
	figs := evaluate(pairs, 20, 0.1)
	if _, ok := figureOf(figs, "tpot", "p50"); ok {
		t.Errorf("tpot figure without a measured TPOT: %+v", figs)
	}
	if _, ok := figureOf(figs, "e2e", "p50"); !ok {
		t.Errorf("no e2e figure: %+v", figs)
	}
}

func TestSentence(t *testing.T) {
	for _, c := range []struct {
		f    decide.WindowFigure
		want string
	}{
		{decide.WindowFigure{Metric: "tpot", Percentile: "p50", Ratio: 1.312, Lower: 1.241, Upper: 1.38, Bounded: true, Judged: true, Verdict: decide.WindowWorse}, "TPOT p50 +31 % (95 % CI +24…+38 %), worse"},
		{decide.WindowFigure{Metric: "ttft", Percentile: "p99", Ratio: 0.998, Lower: 0.95, Upper: 1.05, Bounded: true, Judged: true, Within: true}, "TTFT p99 +0 % (95 % CI −5…+5 %), within tolerance"},
		{decide.WindowFigure{Metric: "ttft", Percentile: "p99", Ratio: 1.05, Lower: 0.95, Upper: 1.15, Bounded: true, Judged: true}, "TTFT p99 +5 % (95 % CI −5…+15 %), not enough evidence"},
		{decide.WindowFigure{Metric: "e2e", Percentile: "p50", Ratio: 0.8, Lower: 0.7, Upper: 0.9, Bounded: true, Judged: true, Verdict: decide.WindowBetter}, "E2E p50 −20 % (95 % CI −30…−10 %), better"},
		{decide.WindowFigure{Metric: "itl", Percentile: "p50", Ratio: 1.5}, "ITL p50 +50 %, too few"},
	} {
		if got := sentence(c.f); got != c.want {
			t.Errorf("%+v: %q, want %q", c.f, got, c.want)
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
	s := &alwaysOnRun{cmp: p.Comparison, scenario: &plan.Scenario{Scenario: config.Scenario{Name: p.Scenario}}, interval: p.Interval}
	s.window = pairsOf(stats.MinSamples(0.99), 1.4)
	s.evaluated, s.pairs = time.Now(), len(s.window)
	s.figures = evaluate(s.window, p.Comparison.MinPairs, p.Comparison.Tolerance)
	idle := func(ctx context.Context, _ alwaysOnKey, _ *alwaysOnRun) { <-ctx.Done() } // the window is set; no pair is sent
	r := &AlwaysOn{runs: reconcile.New(context.Background(), func(a, b *alwaysOnRun) bool { return a == b }, idle)}
	r.runs.Apply(map[alwaysOnKey]*alwaysOnRun{{p.Comparison.Name, p.Scenario}: s}, nil)
	defer r.runs.Stop(nil)
	if got, want := testutil.CollectAndCount(r), MaxSeries(cfg); got != want {
		t.Errorf("%d series from a full window, MaxSeries says %d", got, want)
	}
}

// One evaluation of a full window at the most pairs the default canary
// rate limit lets a window hold (100 requests/s, two per pair, 10 minutes:
// 30,000; a fifth of that per compared scenario of five): every metric's
// median and, past their counts, p90 and p99 bootstraps.
func BenchmarkEvaluateFullWindow(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	pairs := make([]alwaysOnPair, 6000)
	for i := range pairs {
		for m := range numMetrics {
			v := 0.02 + rng.ExpFloat64()*0.01
			pairs[i].base[m], pairs[i].cand[m] = v, v*(1+rng.NormFloat64()*0.05)
		}
	}
	for b.Loop() {
		evaluate(pairs, 20, 0.1)
	}
}
