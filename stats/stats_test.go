package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestMannWhitney(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	draw := func(n int, shift float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = rng.NormFloat64() + shift
		}
		return out
	}
	if p := MannWhitney(draw(200, 0), draw(200, 0)); p < 0.01 {
		t.Errorf("same distribution: p = %g", p)
	}
	if p := MannWhitney(draw(200, 0), draw(200, 0.5)); p > 0.001 {
		t.Errorf("shifted by half a sigma: p = %g", p)
	}
	// By hand: rank sum of a = 18, U = 3, sigma = sqrt(5*5*11/12),
	// z = (|3-12.5| - 0.5)/sigma = 1.880, two-sided p = 0.0601.
	if p := MannWhitney([]float64{1, 2, 3, 4, 8}, []float64{5, 6, 7, 9, 10}); math.Abs(p-0.0601) > 0.0005 {
		t.Errorf("hand-computed case: p = %.4f, want 0.0601", p)
	}
}
