package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSignedRankMatchesR(t *testing.T) {
	// R: wilcox.test(x, y, paired = TRUE) on its own example: V = 40,
	// p-value = 0.03906 (exact).
	x := []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30}
	y := []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29}
	d := make([]float64, len(x))
	for i := range x {
		d[i] = x[i] - y[i]
	}
	s := PairedShift(d)
	if !near(s.P, 0.03906, 1e-5) {
		t.Errorf("p = %.5f, want 0.03906", s.P)
	}
	// n = 9: the 95 % interval runs from the 6th to the 40th Walsh average.
	w := allWalsh(d)
	if !s.Bounded || s.Lower != w[5] || s.Upper != w[len(w)-6] {
		t.Errorf("interval [%v %v], want [%v %v]", s.Lower, s.Upper, w[5], w[len(w)-6])
	}
	if s.Estimate != w[len(w)/2] {
		t.Errorf("estimate %v, want %v", s.Estimate, w[len(w)/2])
	}
}

func allWalsh(d []float64) []float64 {
	var w []float64
	for i := range d {
		for j := i; j < len(d); j++ {
			w = append(w, (d[i]+d[j])/2)
		}
	}
	slices.Sort(w)
	return w
}

func TestWalshAtMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 7, 60, 301} {
		d := make([]float64, n)
		for i := range d {
			d[i] = math.Round(rng.NormFloat64()*10) / 10 // ties too
		}
		sorted := slices.Sorted(slices.Values(d))
		w := allWalsh(d)
		for _, k := range []int{1, max(1, len(w)/3), (len(w) + 1) / 2, len(w)} {
			if got := walshAt(sorted, k); got != w[k-1] {
				t.Errorf("n=%d k=%d: %v, want %v", n, k, got, w[k-1])
			}
		}
	}
}

func TestPairedShiftFindsAShiftAndNotNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	noise := make([]float64, 200)
	shifted := make([]float64, 200)
	for i := range noise {
		noise[i] = rng.NormFloat64() * 0.1
		shifted[i] = math.Log(1.3) + rng.NormFloat64()*0.1
	}
	if s := PairedShift(noise); s.P < 0.05 || s.Lower > 0 || s.Upper < 0 {
		t.Errorf("noise: p=%v [%v %v]", s.P, s.Lower, s.Upper)
	}
	s := PairedShift(shifted)
	if s.P > 1e-6 || s.Lower > math.Log(1.3) || s.Upper < math.Log(1.3) || s.Lower < math.Log(1.2) {
		t.Errorf("shift of 30%%: p=%v est=%v [%v %v]", s.P, math.Exp(s.Estimate), math.Exp(s.Lower), math.Exp(s.Upper))
	}
	if s := PairedShift([]float64{0.1, 0.2, 0.3}); s.Bounded {
		t.Error("three pairs bounded")
	}
}

func TestQuantileRatioKeepsPairsTogether(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	base := make([]float64, 400)
	slower := make([]float64, 400)
	same := make([]float64, 400)
	strata := make([]int, 400)
	for i := range base {
		base[i] = 0.05 + rng.ExpFloat64()*0.02
		slower[i] = base[i] * 1.4
		same[i] = base[i] * (1 + rng.NormFloat64()*0.02)
		strata[i] = i % 4
	}
	r, lo, hi, ok := QuantileRatio(base, slower, strata, 0.99)
	if !ok || !near(r, 1.4, 1e-9) || !near(lo, 1.4, 1e-9) || !near(hi, 1.4, 1e-9) {
		t.Errorf("x1.4: %v [%v %v] %v", r, lo, hi, ok)
	}
	r, lo, hi, ok = QuantileRatio(base, same, nil, 0.99)
	if !ok || lo > 1 || hi < 1 || hi-lo > 0.2 {
		t.Errorf("same: %v [%v %v] %v", r, lo, hi, ok)
	}
	if _, _, _, ok := QuantileRatio(base[:1], same[:1], nil, 0.5); ok {
		t.Error("one pair ok")
	}
}

func BenchmarkPairedShift(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	d := make([]float64, 5000)
	for i := range d {
		d[i] = rng.NormFloat64()
	}
	for b.Loop() {
		PairedShift(d)
	}
}

func BenchmarkQuantileRatio(b *testing.B) {
	rng := rand.New(rand.NewPCG(11, 12))
	base, cand, strata := make([]float64, 2000), make([]float64, 2000), make([]int, 2000)
	for i := range base {
		base[i], cand[i], strata[i] = rng.ExpFloat64(), rng.ExpFloat64(), i%4
	}
	for b.Loop() {
		QuantileRatio(base, cand, strata, 0.99)
	}
}
