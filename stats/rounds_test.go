package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// With equal within-round variances and rounds that disagree beyond them,
// the pooled interval is the t interval on the rounds' own estimates.
func TestPoolRoundsIsTheTIntervalOnRoundsWhenTheyDisagree(t *testing.T) {
	y := []float64{0.01, 0.03, -0.02, 0.02}
	p, ok := PoolRounds(y, []float64{1e-4, 1e-4, 1e-4, 1e-4})
	if !ok {
		t.Fatal("not pooled")
	}
	mean, lo, hi, _ := MeanInterval(y)
	for _, c := range [][2]float64{{p.Estimate, mean}, {p.Lower, lo}, {p.Upper, hi}, {p.Lower, -0.024374}, {p.Upper, 0.044374}} {
		if math.Abs(c[0]-c[1]) > 1e-6 {
			t.Errorf("got %.6f, want %.6f", c[0], c[1])
		}
	}
	if p.Between <= 0 {
		t.Errorf("between-round spread %v, want above 0", p.Between)
	}
}

// Rounds that agree more closely than their own noise never make the
// interval narrower than the within-round variance allows.
func TestPoolRoundsNeverNarrowerThanWithinRounds(t *testing.T) {
	p, ok := PoolRounds([]float64{0.010, 0.011, 0.009, 0.010}, []float64{1e-4, 1e-4, 1e-4, 1e-4})
	if !ok {
		t.Fatal("not pooled")
	}
	if math.Abs(p.SE-0.005) > 1e-12 || p.Between != 0 {
		t.Errorf("se %v between %v, want 0.005 and 0", p.SE, p.Between)
	}
}

func TestPoolRoundsRefusesWhatItCannotPool(t *testing.T) {
	for _, c := range []struct{ y, v []float64 }{
		{[]float64{0.1}, []float64{1}},
		{[]float64{0.1, 0.2}, []float64{1, -1}},
		{[]float64{0.1, math.NaN()}, []float64{1, 1}},
		{[]float64{0.1, 0.2}, []float64{1}},
	} {
		if _, ok := PoolRounds(c.y, c.v); ok {
			t.Errorf("pooled %v %v", c.y, c.v)
		}
	}
}

// Coverage against a known truth: rounds drawn with a between-round spread
// and within-round noise of their own; the 95 % interval holds the true
// effect in at least 94 % of 4,000 draws for every rounds count tried, with
// and without a between-round spread.
func TestPoolRoundsCoversTheTruth(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{2, 4, 6, 10} {
		for _, tau := range []float64{0, 0.02, 0.05} {
			const draws, truth, within = 4000, 0.1, 0.02
			held := 0
			for range draws {
				y, v := make([]float64, k), make([]float64, k)
				for i := range y {
					// Within-round variances differ as rounds' sizes do.
					sd := within * (0.7 + 0.6*rng.Float64())
					y[i] = truth + tau*rng.NormFloat64() + sd*rng.NormFloat64()
					v[i] = sd * sd
				}
				p, _ := PoolRounds(y, v)
				if p.Lower <= truth && truth <= p.Upper {
					held++
				}
			}
			if cov := float64(held) / draws; cov < 0.94 {
				t.Errorf("%d rounds, between-round sd %v: coverage %.3f, want at least 0.94", k, tau, cov)
			}
		}
	}
}

func TestPoolRoundsRoundWithoutVariance(t *testing.T) {
	a, _ := PoolRounds([]float64{0.1, 0.2, 0.15}, []float64{0, 1e-4, 4e-4})
	b, _ := PoolRounds([]float64{0.1, 0.2, 0.15}, []float64{1e-4, 1e-4, 4e-4})
	if a != b {
		t.Errorf("a round without variance pooled as %+v, want as the least of the others: %+v", a, b)
	}
}

func TestPoolRoundsWithoutVarianceAnywhere(t *testing.T) {
	p, ok := PoolRounds([]float64{0.2, 0.2, 0.2}, []float64{0, 0, 0})
	if !ok || p.Estimate != 0.2 || p.Lower != 0.2 || p.Upper != 0.2 {
		t.Errorf("rounds that agree exactly: %+v %v", p, ok)
	}
	y := []float64{0.1, 0.3, 0.2}
	p, _ = PoolRounds(y, []float64{0, 0, 0})
	if _, lo, hi, _ := MeanInterval(y); math.Abs(p.Lower-lo) > 1e-12 || math.Abs(p.Upper-hi) > 1e-12 {
		t.Errorf("rounds without variance of their own: [%g, %g], want the t interval [%g, %g]", p.Lower, p.Upper, lo, hi)
	}
}

func TestRoundsToSettle(t *testing.T) {
	// se 0.02 over 4 rounds, 0.05 from the margin: t(3)·0.02 = 0.064 does
	// not settle it; t(k−1)·0.02·√(4/k) < 0.05 first at k = 5 (0.0497).
	if k := RoundsToSettle(0.05, 0.02, 4, 0.10, 100); k != 5 {
		t.Errorf("rounds to settle %d, want 5", k)
	}
	if k := RoundsToSettle(0.10, 0.02, 4, 0.10, 100); k != 0 {
		t.Errorf("an estimate on the margin settles at %d rounds, want never (0)", k)
	}
}
