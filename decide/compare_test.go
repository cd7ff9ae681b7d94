package decide

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/stats"
)

// paired makes n pairs over rounds rounds: the baseline's values spread
// like latencies (lognormal around 50 ms), the candidate's each the
// baseline's times factor(round) and a little noise of its own.
func paired(n, rounds int, factor func(round int) float64) (base, cand []float64, strata []int) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		k := i % rounds
		b := 0.05 * math.Exp(0.3*rng.NormFloat64())
		base = append(base, b)
		cand = append(cand, b*factor(k)*math.Exp(0.02*rng.NormFloat64()))
		strata = append(strata, k)
	}
	return base, cand, strata
}

func constant(f float64) func(int) float64 { return func(int) float64 { return f } }

func TestRule(t *testing.T) {
	const margin = 0.1
	for _, tc := range []struct {
		lo, hi float64
		want   Verdict
	}{
		{0.15, 0.3, Worse},
		{-0.3, -0.15, Better},
		{-0.05, 0.05, Within},
		{0.02, 0.08, Within}, // a change, shown smaller than the tolerance
		{-0.3, 0.05, Within}, // not shown better, shown not worse
		{0.05, 0.15, NotEnough},
		{-0.2, 0.2, NotEnough},
	} {
		if got := Rule(tc.lo, tc.hi, margin); got != tc.want {
			t.Errorf("Rule([%g, %g], %g) = %q, want %q", tc.lo, tc.hi, margin, got, tc.want)
		}
	}
}

func TestMedianShiftVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      int
		factor func(int) float64
		want   Verdict
	}{
		{"worse", 300, constant(1.4), Worse},
		{"better", 300, constant(0.7), Better},
		{"same", 300, constant(1), Within},
		{"within tolerance", 300, constant(1.05), Within},
		// At the tolerance no sample shows it either way.
		{"at the tolerance", 300, constant(1.1), NotEnough},
		{"too few", 30, constant(2), TooFew},
		// Pooled it looks 20 % worse; the rounds disagree, so the rounds,
		// not the pairs, set the interval's width.
		{"rounds disagree", 300, func(k int) float64 { return []float64{1.7, 0.95, 1.3, 0.9, 1.5, 1.0}[k] }, NotEnough},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, cand, strata := paired(tc.n, 6, tc.factor)
			m := MedianShift("tpot", base, cand, strata, 6, DefaultTolerance)
			if m.Verdict != tc.want {
				t.Fatalf("verdict %q, want %q: %v [%v, %v]", m.Verdict, tc.want, deref(m.Estimate), deref(m.Lower), deref(m.Upper))
			}
			if len(m.Rounds) != 6 || m.Estimate == nil || m.Pairs != tc.n || m.Method != MethodHodgesLehmann {
				t.Fatalf("rounds %v, estimate %v, pairs %d, method %s", m.Rounds, m.Estimate, m.Pairs, m.Method)
			}
			if tc.want == TooFew {
				if m.Lower != nil || m.Needs != 6*stats.MinSamples(0.5) || m.Unsettled() == "" {
					t.Errorf("a too-few metric has an interval %v, needs %d, says %q", m.Lower, m.Needs, m.Unsettled())
				}
				return
			}
			if *m.Lower > *m.Estimate || *m.Estimate > *m.Upper {
				t.Errorf("estimate %g outside its interval [%g, %g]", *m.Estimate, *m.Lower, *m.Upper)
			}
			if tc.want == NotEnough && !strings.Contains(m.Unsettled(), "tolerance") {
				t.Errorf("not enough evidence says %q", m.Unsettled())
			}
		})
	}
	base, cand, strata := paired(300, 6, constant(1.4))
	m := MedianShift("tpot", base, cand, strata, 6, DefaultTolerance)
	if *m.Lower < 1.35 || *m.Upper > 1.45 {
		t.Errorf("a 40 %% slower candidate: ratio %g [%g, %g]", *m.Estimate, *m.Lower, *m.Upper)
	}
	// A tolerance of 50 % (the burst's max_regression) takes the verdict.
	if m := MedianShift("tpot", base, cand, strata, 6, 0.5); m.Verdict != Within {
		t.Errorf("40 %% worse within a 50 %% tolerance: %q", m.Verdict)
	}
}

// The interval covers the truth when the requests of a round share its
// conditions: each round's candidate is slower by a drift of its own
// (lognormal, 5 %), and the pairs of a round are not independent
// replicates. Over 400 comparisons of 6 rounds the 95 % interval holds
// the true ratio (1.2) in at least 93 %; pooling the pairs as if
// independent held it in under half.
func TestMedianShiftCoversTheTruthUnderRoundDrift(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const comparisons, rounds, truth = 400, 6, 1.2
	held, naive := 0, 0
	for range comparisons {
		drift := make([]float64, rounds)
		for k := range drift {
			drift[k] = math.Exp(0.05 * rng.NormFloat64())
		}
		var base, cand []float64
		var strata []int
		for i := range 600 {
			k := i % rounds
			b := 0.05 * math.Exp(0.3*rng.NormFloat64())
			base, cand, strata = append(base, b), append(cand, b*truth*drift[k]*math.Exp(0.1*rng.NormFloat64())), append(strata, k)
		}
		m := MedianShift("tpot", base, cand, strata, rounds, DefaultTolerance)
		if *m.Lower <= truth && truth <= *m.Upper {
			held++
		}
		if s := stats.PairedShift(logRatios(base, cand)); math.Exp(s.Lower) <= truth && truth <= math.Exp(s.Upper) {
			naive++
		}
	}
	if cov := float64(held) / comparisons; cov < 0.93 {
		t.Errorf("coverage %.3f, want at least 0.93", cov)
	}
	if cov := float64(naive) / comparisons; cov > 0.5 {
		t.Errorf("pooled pairs covered %.3f: the test's drift is too small to tell the rules apart", cov)
	}
}

func TestTailRatioVerdicts(t *testing.T) {
	base, cand, strata := paired(6*400, 6, constant(1.5))
	m := TailRatio("e2e", 0.99, base, cand, strata, 6, DefaultTolerance)
	if m.Verdict != Worse || m.Quantile != "p99" || m.Method != MethodQuantileRatio || *m.Lower <= 1.1 {
		t.Errorf("p99 of 400 pairs a round, 50 %% worse: %+v", m)
	}
	base, cand, strata = paired(6*400, 6, constant(1))
	if m := TailRatio("e2e", 0.99, base, cand, strata, 6, DefaultTolerance); m.Verdict != Within {
		t.Errorf("p99 of the same: %q [%v, %v]", m.Verdict, deref(m.Lower), deref(m.Upper))
	}
	base, cand, strata = paired(6*100, 6, constant(3))
	m = TailRatio("e2e", 0.99, base, cand, strata, 6, DefaultTolerance)
	if m.Verdict != TooFew || m.Needs != 6*368 || m.Estimate == nil || m.Lower != nil {
		t.Errorf("p99 of 100 pairs a round: %+v", m)
	}
}

func TestGoodputVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name       string
		base, cand int // good of 1000 per round
		want       Verdict
	}{
		{"worse", 950, 600, Worse},
		{"better", 600, 950, Better},
		{"same", 900, 900, Within},
		{"half a point worse", 950, 945, Within},
		// Ten times the bad requests: worse, though 90 % is within 10 %
		// of 99 %.
		{"99 to 90", 990, 900, Worse},
		{"100 to 90", 1000, 900, Worse},
		{"at the tolerance", 950, 930, NotEnough},
	} {
		var good, judged [][2]int
		for range 6 {
			good, judged = append(good, [2]int{tc.base, tc.cand}), append(judged, [2]int{1000, 1000})
		}
		m := Goodput(good, judged, GoodputTolerance)
		if m.Verdict != tc.want {
			t.Errorf("%s: %q, want %q: %v [%v, %v]", tc.name, m.Verdict, tc.want, deref(m.Estimate), deref(m.Lower), deref(m.Upper))
		}
	}
	good, judged := [][2]int{{950, 400}, {600, 950}}, [][2]int{{1000, 1000}, {1000, 1000}}
	if m := Goodput(good, judged, GoodputTolerance); m.Verdict != NotEnough {
		t.Errorf("two rounds pointing both ways: %q", m.Verdict)
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
