// Package stats computes the statistics llmprobe's figures and verdicts
// rest on: exact quantiles, summaries and their order-statistic intervals,
// proportions' and means' intervals, the rank and t tests, bootstrap
// bounds, and the bound on the error the client itself added.
package stats

import (
	"math"
	"math/rand/v2"
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

// Bootstrap settings of RatioLowerBound: resamples drawn, and the seed that
// makes a report's bound the same every time it is judged.
const (
	bootstrapResamples = 1000
	bootstrapSeed      = 0x5eed
)

// RatioLowerBound is the one-sided 95 % lower confidence bound of
// cur's q-quantile over prev's, by bootstrap: each side resampled with
// replacement, the ratio taken 1000 times, its 5th percentile returned. A
// quantile moved by a few outliers gets a low bound; one the whole sample
// moved keeps its ratio. ok is false without two samples a side or with a
// baseline quantile at 0.
func RatioLowerBound(cur, prev []float64, q float64) (bound float64, ok bool) {
	if len(cur) < 2 || len(prev) < 2 {
		return 0, false
	}
	a, b := slices.Sorted(slices.Values(cur)), slices.Sorted(slices.Values(prev))
	rng := rand.New(rand.NewPCG(bootstrapSeed, uint64(len(a))<<32|uint64(len(b))))
	countsA, countsB := make([]int, len(a)), make([]int, len(b))
	ratios := make([]float64, 0, bootstrapResamples)
	for range bootstrapResamples {
		qb := resampledQuantile(b, countsB, q, rng)
		if qb <= 0 {
			return 0, false
		}
		ratios = append(ratios, resampledQuantile(a, countsA, q, rng)/qb)
	}
	slices.Sort(ratios)
	return Quantile(ratios, 0.05), true
}

// resampledQuantile draws len(sorted) values of sorted with replacement
// and returns the q-quantile of the draw, as Quantile computes it: the
// draw is kept as counts per sorted index, so no sort is needed.
func resampledQuantile(sorted []float64, counts []int, q float64, rng *rand.Rand) float64 {
	clear(counts)
	n := len(sorted)
	for range n {
		counts[rng.IntN(n)]++
	}
	pos := q * float64(n-1)
	lo := int(math.Floor(pos))
	// The values at ranks lo and lo+1 of the draw.
	at := func(rank int) float64 {
		seen := 0
		for i, c := range counts {
			seen += c
			if seen > rank {
				return sorted[i]
			}
		}
		return sorted[n-1]
	}
	vlo, vhi := at(lo), at(min(lo+1, n-1))
	return vlo + (vhi-vlo)*(pos-float64(lo))
}
