package stats

import (
	"math"

	"gonum.org/v1/gonum/mathext"
)

// SignEvidence is the log of an e-value against "the median lies at or
// below the margin", from above pairs whose difference lay above the margin
// and below pairs whose difference lay under it: the wealth of a bettor who
// stakes a fraction λ of it on each pair landing above, averaged over λ
// uniform in [0, 1] (closed form: 2^(n+1) ∫_½^1 p^above (1−p)^below dp).
//
// Under that hypothesis each bet's expected factor is at most 1 whatever
// the distribution (heavy tails included), so the wealth is a
// nonnegative supermartingale and, by Ville's inequality, reaches 1/α at
// any time of the sequence with probability at most α: it may be looked at
// after every pair.
func SignEvidence(above, below int) float64 {
	if above < 0 || below < 0 {
		return math.Inf(-1)
	}
	a, b := float64(above), float64(below)
	la, _ := math.Lgamma(a + 1)
	lb, _ := math.Lgamma(b + 1)
	ln, _ := math.Lgamma(a + b + 2)
	// ∫_½^1 is 1 − I_½(above+1, below+1) = I_½(below+1, above+1), taken
	// that way round so it does not cancel to 0 where it is small.
	upper := mathext.RegIncBeta(b+1, a+1, 0.5)
	return (a+b+1)*math.Ln2 + la + lb - ln + math.Log(upper)
}

// SignBound is the fewest of n pairs that must lie on one side of a value
// for SignEvidence to reach logThreshold against the median lying on the
// other side; n+1 when no count can.
func SignBound(n int, logThreshold float64) int {
	lo, hi := 0, n+1 // evidence grows with the count: bisect for the first that reaches
	for lo < hi {
		mid := (lo + hi) / 2
		if SignEvidence(mid, n-mid) >= logThreshold {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// MedianSequence is the confidence sequence for the median of d at the
// level logThreshold sets (α = e^−logThreshold on each side): the values
// no SignEvidence rules out, the k-th smallest and k-th largest of d for
// k = SignBound. Valid at every n at once, unlike a fixed-n interval
// looked at repeatedly. sorted is d in increasing order; ok is false while
// n is too small for the level.
func MedianSequence(sorted []float64, logThreshold float64) (lower, upper float64, ok bool) {
	n := len(sorted)
	k := SignBound(n, logThreshold)
	if k > n || k < 1 {
		return 0, 0, false
	}
	return sorted[n-k], sorted[k-1], true
}
