package decide

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/llmprobe/llmprobe/stats"
)

// paired makes n pairs over two rounds: the baseline's values spread like
// latencies (lognormal around 50 ms), the candidate's each the baseline's
// times factor(round) and a little noise of its own.
func paired(n int, factor func(round int) float64) (base, cand []float64, strata []int) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		k := i % 2
		b := 0.05 * math.Exp(0.3*rng.NormFloat64())
		base = append(base, b)
		cand = append(cand, b*factor(k)*math.Exp(0.02*rng.NormFloat64()))
		strata = append(strata, k)
	}
	return base, cand, strata
}

func constant(f float64) func(int) float64 { return func(int) float64 { return f } }

func TestMedianShiftVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      int
		factor func(int) float64
		want   Verdict
	}{
		{"worse", 100, constant(1.4), Worse},
		{"better", 100, constant(0.7), Better},
		{"same", 100, constant(1), NoDifference},
		// Significant, but inside the 10 % tolerance.
		{"within tolerance", 100, constant(1.05), NoDifference},
		{"too few", 5, constant(2), TooFew},
		// Pooled it looks 25 % worse; one round says better.
		{"rounds disagree", 100, func(k int) float64 { return []float64{1.7, 0.95}[k] }, Inconclusive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, cand, strata := paired(tc.n, tc.factor)
			m := MedianShift("tpot", base, cand, strata, 2, DefaultTolerance)
			if m.Verdict != tc.want {
				t.Fatalf("verdict %q, want %q: %+v", m.Verdict, tc.want, m)
			}
			if len(m.Rounds) != 2 || m.Estimate == nil || m.Pairs != tc.n {
				t.Fatalf("rounds %v, estimate %v, pairs %d", m.Rounds, m.Estimate, m.Pairs)
			}
			if tc.want == TooFew {
				if m.Lower != nil || m.Needs != stats.MinSamples(0.5) {
					t.Errorf("a too-few metric has an interval %v or needs %d", m.Lower, m.Needs)
				}
				return
			}
			if *m.Lower > *m.Estimate || *m.Estimate > *m.Upper {
				t.Errorf("estimate %g outside its interval [%g, %g]", *m.Estimate, *m.Lower, *m.Upper)
			}
		})
	}
	base, cand, strata := paired(100, constant(1.4))
	m := MedianShift("tpot", base, cand, strata, 2, DefaultTolerance)
	if *m.Lower < 1.35 || *m.Upper > 1.45 || *m.P > 0.001 {
		t.Errorf("a 40 %% slower candidate: ratio %g [%g, %g], p %g", *m.Estimate, *m.Lower, *m.Upper, *m.P)
	}
	// A tolerance of 50 % (the burst's max_regression) takes the verdict.
	if m := MedianShift("tpot", base, cand, strata, 2, 0.5); m.Verdict != NoDifference {
		t.Errorf("40 %% worse within a 50 %% tolerance: %q", m.Verdict)
	}
}

func TestTailRatioVerdicts(t *testing.T) {
	base, cand, strata := paired(400, constant(1.5))
	m := TailRatio("e2e", 0.99, base, cand, strata, 2, DefaultTolerance)
	if m.Verdict != Worse || m.Quantile != "p99" || m.Method != MethodBootstrap || *m.Lower <= 1 {
		t.Errorf("p99 of 400 pairs, 50 %% worse: %+v", m)
	}
	base, cand, strata = paired(400, constant(1))
	if m := TailRatio("e2e", 0.99, base, cand, strata, 2, DefaultTolerance); m.Verdict != NoDifference {
		t.Errorf("p99 of the same: %q", m.Verdict)
	}
	base, cand, strata = paired(100, constant(3))
	m = TailRatio("e2e", 0.99, base, cand, strata, 2, DefaultTolerance)
	if m.Verdict != TooFew || m.Needs != 368 || m.Estimate == nil || m.Lower != nil {
		t.Errorf("p99 of 100 pairs: %+v", m)
	}
}

func TestGoodputVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name       string
		base, cand int // good of 100 per round
		want       Verdict
	}{
		{"worse", 95, 60, Worse},
		{"better", 60, 95, Better},
		{"same", 90, 90, NoDifference},
		{"a little worse", 95, 92, NoDifference},
	} {
		good, judged := [][2]int{{tc.base, tc.cand}, {tc.base, tc.cand}}, [][2]int{{100, 100}, {100, 100}}
		m := Goodput(good, judged, DefaultTolerance)
		if m.Verdict != tc.want {
			t.Errorf("%s: %q, want %q: %+v", tc.name, m.Verdict, tc.want, m)
		}
	}
	good, judged := [][2]int{{95, 40}, {60, 95}}, [][2]int{{100, 100}, {100, 100}}
	if m := Goodput(good, judged, DefaultTolerance); m.Verdict == Worse || m.Verdict == Better {
		t.Errorf("rounds pointing both ways: %q", m.Verdict)
	}
}

func TestJudge(t *testing.T) {
	margin := math.Log1p(0.1)
	for _, tc := range []struct {
		est, lo, hi float64
		rounds      []float64
		want        Verdict
	}{
		{0.3, 0.2, 0.4, []float64{0.3, 0.25}, Worse},
		{-0.3, -0.4, -0.2, []float64{-0.3, -0.25}, Better},
		{0.3, -0.01, 0.6, []float64{0.3, 0.25}, NoDifference},   // the interval reaches 1
		{0.05, 0.01, 0.09, []float64{0.05, 0.05}, NoDifference}, // within tolerance
		{0.3, 0.2, 0.4, []float64{0.6, -0.01}, Inconclusive},
		{0.3, 0.2, 0.4, []float64{0.6, 0}, Inconclusive},
		{0.3, 0.2, 0.4, []float64{0.6, math.NaN()}, Worse}, // a round without pairs says nothing
	} {
		if got := Judge(tc.est, tc.lo, tc.hi, margin, tc.rounds); got != tc.want {
			t.Errorf("Judge(%g [%g, %g], rounds %v) = %q, want %q", tc.est, tc.lo, tc.hi, tc.rounds, got, tc.want)
		}
	}
}
