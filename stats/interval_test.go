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

// McNemar's exact p is the binomial test's on the discordant pairs (R:
// binom.test(min(b, c), b + c)$p.value).
func TestMcNemarMatchesTheBinomialTest(t *testing.T) {
	for _, tc := range []struct {
		b, c int
		p    float64
	}{
		{10, 2, 0.03857422},
		{2, 10, 0.03857422},
		{6, 0, 0.03125},
		{5, 0, 0.0625},
		{7, 7, 1},
		{0, 0, 1},
		{30, 12, 0.0079159}, // 2·Σ_{i≤12} C(42, i) / 2⁴²
	} {
		if p := McNemar(tc.b, tc.c); !near(p, tc.p, 1e-5) {
			t.Errorf("McNemar(%d, %d) = %.6f, want %.6f", tc.b, tc.c, p, tc.p)
		}
	}
}

// Newcombe's paired interval holds the difference, stays within [-1, 1],
// narrows as the sides agree more, and covers the true difference about
// 95 % of the time.
func TestPairedProportionDiff(t *testing.T) {
	d, lo, hi, ok := PairedProportionDiff(80, 12, 3, 5) // baseline 92 %, candidate 83 %
	if !ok || !near(d, -0.09, 1e-12) || !(lo < d && d < hi) || hi >= 0 || lo < -1 {
		t.Errorf("diff %.3f [%.3f, %.3f] ok %v", d, lo, hi, ok)
	}
	// The same margins, less agreement: a wider interval.
	_, lo2, hi2, _ := PairedProportionDiff(75, 17, 8, 0)
	if hi2-lo2 <= hi-lo {
		t.Errorf("less agreement gave [%.3f, %.3f], no wider than [%.3f, %.3f]", lo2, hi2, lo, hi)
	}
	if _, _, _, ok := PairedProportionDiff(0, 0, 0, 0); ok {
		t.Error("no pairs gave an interval")
	}
	if d, lo, hi, _ := PairedProportionDiff(0, 0, 0, 10); d != 0 || lo > 0 || hi < 0 {
		t.Errorf("all failing on both sides: %g [%g, %g]", d, lo, hi)
	}
	// Coverage: pairs pass on the baseline with 0.9; a candidate that
	// passes a baseline pass with 0.95 and a baseline fail with 0.3 passes
	// 0.885 in all: the difference is -0.015.
	rng := rand.New(rand.NewPCG(1, 2))
	covered, reps := 0, 2000
	for range reps {
		var a, b, c, d int
		for range 200 {
			base := rng.Float64() < 0.9
			cand := rng.Float64() < map[bool]float64{true: 0.95, false: 0.3}[base]
			switch {
			case base && cand:
				a++
			case base:
				b++
			case cand:
				c++
			default:
				d++
			}
		}
		if _, lo, hi, _ := PairedProportionDiff(a, b, c, d); lo <= -0.015 && -0.015 <= hi {
			covered++
		}
	}
	if share := float64(covered) / float64(reps); share < 0.93 || share > 0.975 {
		t.Errorf("the interval covered the true difference %.1f%% of the time, want about 95%%", 100*share)
	}
}

// With every request meeting the objective the Wilson interval's lower end
// is n/(n + z²): it reaches 99 % at n ≥ 0.99·z²/0.01, 381 requests, and
// 90 % at 35.
func TestWilsonToSettle(t *testing.T) {
	for _, c := range []struct {
		p, target float64
		want      int
	}{
		{1, 0.99, 381},
		{1, 0.9, 35},
		{0.99, 0.99, 0},
	} {
		if got := WilsonToSettle(c.p, c.target, 1_000_000); got != c.want {
			t.Errorf("share %g against %g: %d, want %d", c.p, c.target, got, c.want)
		}
		if n := c.want; n > 0 {
			if lo, _, _ := Wilson(n, n); lo < c.target {
				t.Errorf("%d of %d: lower end %g under %g", n, n, lo, c.target)
			}
			if lo, _, _ := Wilson(n-1, n-1); lo >= c.target {
				t.Errorf("%d of %d already settles", n-1, n-1)
			}
		}
	}
	if got := WilsonToSettle(0.5, 0.9, 1000); got == 0 || got > 20 {
		t.Errorf("half against 90 %%: %d", got)
	}
}
