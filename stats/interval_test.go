package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestMinSamplesMatchesTheRule(t *testing.T) {
	for q, want := range map[float64]int{0.5: 6, 0.9: 36, 0.95: 72, 0.99: 368, 0.999: 3688} {
		if got := MinSamples(q); got != want {
			t.Errorf("MinSamples(%v) = %d, want %d", q, got, want)
		}
	}
}

func TestQuantileIntervalUsesOrderStatistics(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	// Median of 10: (X(2), X(9)), coverage 97.9 %.
	lo, hi, loOK, hiOK := QuantileInterval(xs, 0.5)
	if !loOK || !hiOK || lo != 2 || hi != 9 {
		t.Errorf("median of 10: [%v %v] %v %v, want [2 9]", lo, hi, loOK, hiOK)
	}
	// p99 of 10: no upper end, too few.
	if _, _, _, hiOK := QuantileInterval(xs, 0.99); hiOK {
		t.Error("p99 of 10 samples has an upper end")
	}
	// At MinSamples the upper end exists, one below it does not.
	for _, q := range []float64{0.9, 0.99} {
		n := MinSamples(q)
		s := make([]float64, n)
		for i := range s {
			s[i] = float64(i)
		}
		if _, hi, _, ok := QuantileInterval(s, q); !ok || hi != float64(n-1) {
			t.Errorf("q=%v n=%d: upper %v ok=%v, want the maximum", q, n, hi, ok)
		}
		if _, _, _, ok := QuantileInterval(s[:n-1], q); ok {
			t.Errorf("q=%v n=%d: upper end exists", q, n-1)
		}
	}
}

func TestQuantileIntervalCoversTheTrueQuantile(t *testing.T) {
	// Exponential(1): the true p90 is ln 10. Over 2,000 samples of 200
	// the interval must cover it at least 95 % of the time.
	rng := rand.New(rand.NewPCG(1, 2))
	truth, covered := math.Log(10), 0
	const trials = 2000
	for range trials {
		s := make([]float64, 200)
		for i := range s {
			s[i] = rng.ExpFloat64()
		}
		slices.Sort(s)
		lo, hi, _, _ := QuantileInterval(s, 0.9)
		if lo <= truth && truth <= hi {
			covered++
		}
	}
	if rate := float64(covered) / trials; rate < 0.94 {
		t.Errorf("coverage %.3f, want at least 0.95", rate)
	}
}

func TestWilsonAndNewcombe(t *testing.T) {
	lo, hi, ok := Wilson(8, 10)
	if !ok || !near(lo, 0.4902, 1e-4) || !near(hi, 0.9433, 1e-4) {
		t.Errorf("Wilson(8,10) = [%.4f %.4f]", lo, hi)
	}
	if lo, hi, _ := Wilson(0, 20); lo != 0 || !near(hi, 0.1611, 1e-4) {
		t.Errorf("Wilson(0,20) = [%.4f %.4f]", lo, hi)
	}
	if _, _, ok := Wilson(0, 0); ok {
		t.Error("Wilson(0,0) ok")
	}
	// Newcombe (1998), example (a): 56/70 vs 48/80 → 0.2000 [0.0524, 0.3339].
	d, lo, hi, ok := ProportionDiff(48, 80, 56, 70)
	if !ok || !near(d, 0.2, 1e-9) || !near(lo, 0.0524, 1e-4) || !near(hi, 0.3339, 1e-4) {
		t.Errorf("ProportionDiff = %.4f [%.4f %.4f]", d, lo, hi)
	}
}

func TestMeanInterval(t *testing.T) {
	m, lo, hi, ok := MeanInterval([]float64{1, 2, 3, 4, 5})
	if !ok || m != 3 || !near(lo, 1.0368, 1e-4) || !near(hi, 4.9632, 1e-4) {
		t.Errorf("MeanInterval = %v [%.4f %.4f] %v", m, lo, hi, ok)
	}
	if _, _, _, ok := MeanInterval([]float64{1, 2}); ok {
		t.Error("an interval from two runs")
	}
}

// Welch's test against a worked case: equal variances 2.5, means 3 and 4,
// five values each: t = 1 on 8 degrees of freedom, p = 0.3466.
func TestWelchT(t *testing.T) {
	p, ok := WelchT([]float64{1, 2, 3, 4, 5}, []float64{2, 3, 4, 5, 6})
	if !ok || math.Abs(p-0.3466) > 0.0005 {
		t.Errorf("p = %g (ok %v), want 0.3466", p, ok)
	}
	if _, ok := WelchT([]float64{1}, []float64{1, 2}); ok {
		t.Error("one value on a side gave a test")
	}
	if p, ok := WelchT([]float64{1, 1}, []float64{2, 2}); !ok || p != 0 {
		t.Errorf("constant sides with different means: p = %g", p)
	}
	if p, _ := WelchT([]float64{0.10, 0.11, 0.12}, []float64{0.20, 0.21, 0.19}); p >= 0.01 {
		t.Errorf("runs 0.1 vs 0.2 apart by ten spreads: p = %g, want < 0.01", p)
	}
}
