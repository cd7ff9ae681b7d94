package decide

import (
	"math/rand/v2"
	"testing"
)

// checked makes n pairs over two rounds: the baseline passes with
// base(round), the candidate's answer to the same line passes with
// cand(round) where the baseline's passed and failOK where it failed.
func checked(n int, base, cand func(round int) float64, failOK float64) (passed [][2]bool, strata []int) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range n {
		k := i % 2
		b := rng.Float64() < base(k)
		c := rng.Float64() < cand(k)
		if !b {
			c = rng.Float64() < failOK
		}
		passed, strata = append(passed, [2]bool{b, c}), append(strata, k)
	}
	return passed, strata
}

func TestQualityVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name       string
		n          int
		base, cand func(int) float64
		failOK     float64
		want       Verdict
	}{
		{"worse", 400, constant(0.95), constant(0.8), 0.1, Worse},
		{"better", 400, constant(0.8), constant(1), 0.9, Better},
		{"same", 400, constant(0.95), constant(1), 0, Within},
		// A drop of about a point, significant on 4000 pairs, within the
		// 2-point tolerance.
		{"within tolerance", 4000, constant(0.95), constant(0.99), 0, Within},
		// 40 pairs could not show a 2-point drop either way.
		{"not enough", 40, constant(0.95), constant(0.99), 0, NotEnough},
		// 30 points worse on 40 pairs is shown whatever their number.
		{"worse on few pairs", 40, constant(1), constant(0.7), 0, Worse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			passed, strata := checked(tc.n, tc.base, tc.cand, tc.failOK)
			m := Quality(passed, strata, 2, QualityTolerance)
			if m.Verdict != tc.want {
				t.Fatalf("verdict %q, want %q: estimate %v [%v, %v] p %v", m.Verdict, tc.want, *m.Estimate, *m.Lower, *m.Upper, *m.P)
			}
			if m.Method != MethodMcNemar || m.Pairs != tc.n || m.Needs != 300 || len(m.Rounds) != 2 {
				t.Errorf("method %s, pairs %d, needs %d, rounds %v", m.Method, m.Pairs, m.Needs, m.Rounds)
			}
			if *m.Lower > *m.Estimate || *m.Estimate > *m.Upper {
				t.Errorf("estimate %g outside its interval [%g, %g]", *m.Estimate, *m.Lower, *m.Upper)
			}
			if tc.want == NotEnough && m.SettlePairs <= tc.n {
				t.Errorf("not enough evidence on %d pairs would settle on %d", tc.n, m.SettlePairs)
			}
			if tc.name == "within tolerance" && !m.SignificantlyWorse() {
				t.Errorf("a significant drop within the tolerance is not SignificantlyWorse: %+v", m)
			}
		})
	}
	if m := Quality(nil, nil, 2, QualityTolerance); m.Verdict != TooFew || m.Estimate != nil {
		t.Errorf("no checked pairs: %+v", m)
	}
}
