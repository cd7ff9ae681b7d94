package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The closed form is the average over λ of the bettor's wealth, taken
// here by the midpoint rule.
func TestSignEvidenceIsTheMixture(t *testing.T) {
	for _, c := range [][2]int{{0, 0}, {1, 0}, {0, 1}, {5, 3}, {14, 0}, {3, 17}, {60, 40}} {
		above, below := c[0], c[1]
		const steps = 200000
		var sum float64
		for i := range steps {
			l := (float64(i) + 0.5) / steps
			sum += math.Pow(1+l, float64(above)) * math.Pow(1-l, float64(below))
		}
		want := math.Log(sum / steps)
		if got := SignEvidence(above, below); math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Errorf("SignEvidence(%d, %d) = %.9f, the mixture is %.9f", above, below, got, want)
		}
	}
}

func TestSignBoundIsTheFirstCountThatReaches(t *testing.T) {
	thr := math.Log(1 / 0.05)
	for n := 0; n <= 200; n++ {
		k := SignBound(n, thr)
		if k <= n && SignEvidence(k, n-k) < thr {
			t.Fatalf("n=%d: bound %d does not reach", n, k)
		}
		if k > 0 && k-1 <= n && SignEvidence(k-1, n-k+1) >= thr {
			t.Fatalf("n=%d: %d reaches already", n, k-1)
		}
	}
	if k := SignBound(3, thr); k != 4 {
		t.Errorf("3 pairs cannot reach 1/0.05 (bound %d)", k)
	}
}

// Looked at after every pair of 400, the evidence against a true
// hypothesis reaches 1/α in at most α of sequences, at the boundary (the
// median on the margin) and inside it; a median beyond the margin is found.
func TestSignEvidenceUnderContinuousLooking(t *testing.T) {
	const runs, n, alpha = 4000, 400, 0.05
	thr := math.Log(1 / alpha)
	rng := rand.New(rand.NewPCG(7, 38))
	for _, c := range []struct {
		pAbove float64
		max    float64 // share of runs that may reach: α plus three standard errors, or the power wanted
		found  bool
	}{{0.5, alpha + 3*math.Sqrt(alpha*(1-alpha)/runs), false}, {0.4, alpha, false}, {0.65, 0.95, true}} {
		reached := 0
		for range runs {
			above, below := 0, 0
			for range n {
				if rng.Float64() < c.pAbove {
					above++
				} else {
					below++
				}
				if SignEvidence(above, below) >= thr {
					reached++
					break
				}
			}
		}
		share := float64(reached) / runs
		if !c.found && share > c.max {
			t.Errorf("P(above)=%.2f: %.4f of sequences reached 1/%g at some look, more than %.4f", c.pAbove, share, 1/alpha, c.max)
		}
		if c.found && share < c.max {
			t.Errorf("P(above)=%.2f: only %.4f of sequences reached 1/%g in %d pairs", c.pAbove, share, 1/alpha, n)
		}
		t.Logf("P(above)=%.2f: %.4f of %d sequences reached 1/%g within %d pairs", c.pAbove, share, runs, 1/alpha, n)
	}
}

// The sequence holds the median at every n at once, for Cauchy
// differences too: its miss rate over whole sequences stays within 2α.
func TestMedianSequenceCoversAtEveryLook(t *testing.T) {
	const runs, n, alpha = 2000, 300, 0.05
	thr := math.Log(1 / alpha)
	rng := rand.New(rand.NewPCG(3, 8))
	const median = 0.2
	missed := 0
	for range runs {
		var d []float64
		for i := range n {
			d = append(d, median+math.Tan(math.Pi*(rng.Float64()-0.5)))
			if i%10 != 9 {
				continue
			}
			sorted := slices.Sorted(slices.Values(d))
			if lo, hi, ok := MedianSequence(sorted, thr); ok && (lo > median || hi < median) {
				missed++
				break
			}
		}
	}
	if share := float64(missed) / runs; share > 2*alpha {
		t.Errorf("the sequence missed the median in %.3f of runs, more than %g", share, 2*alpha)
	} else {
		t.Logf("missed the median at some look in %.3f of %d runs (each side α %g)", share, runs, alpha)
	}
	if _, _, ok := MedianSequence([]float64{1, 2, 3}, thr); ok {
		t.Error("3 values bound a median at α 0.05")
	}
}
