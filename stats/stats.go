// Package stats computes the statistics llmprobe's figures and verdicts
// rest on: exact quantiles, summaries and their order-statistic intervals,
// proportions' and means' intervals, the rank and t tests, bootstrap
// bounds, and the bound on the error the client itself added.
package stats

import (
	"math"
	"slices"
)

// Quantile is the q-quantile of sorted, by linear interpolation between
// the closest ranks: exact, no estimate from buckets.
func Quantile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(sorted)-1)
	return sorted[lo] + (sorted[hi]-sorted[lo])*(pos-float64(lo))
}

// MannWhitney returns the two-sided p-value of the Mann-Whitney U test that
// a and b come from the same distribution (normal approximation with tie
// correction; fine for the sample sizes of a burst).
func MannWhitney(a, b []float64) float64 {
	n1, n2 := float64(len(a)), float64(len(b))
	if n1 < 2 || n2 < 2 {
		return 1
	}
	type obs struct {
		v     float64
		fromA bool
	}
	all := make([]obs, 0, len(a)+len(b))
	for _, v := range a {
		all = append(all, obs{v, true})
	}
	for _, v := range b {
		all = append(all, obs{v, false})
	}
	slices.SortFunc(all, func(x, y obs) int {
		switch {
		case x.v < y.v:
			return -1
		case x.v > y.v:
			return 1
		}
		return 0
	})
	rankSumA, tieTerm := 0.0, 0.0
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+j+1) / 2 // average of ranks i+1..j
		for k := i; k < j; k++ {
			if all[k].fromA {
				rankSumA += rank
			}
		}
		t := float64(j - i)
		tieTerm += t*t*t - t
		i = j
	}
	u := rankSumA - n1*(n1+1)/2
	n := n1 + n2
	sigma := math.Sqrt(n1 * n2 / 12 * ((n + 1) - tieTerm/(n*(n-1))))
	if sigma == 0 {
		return 1
	}
	z := (math.Abs(u-n1*n2/2) - 0.5) / sigma
	if z < 0 {
		z = 0
	}
	return math.Erfc(z / math.Sqrt2)
}

// bootstrapSeed makes a bootstrap's interval the same every time a report
// is judged.
const bootstrapSeed = 0x5eed
