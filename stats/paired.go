package stats

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Shift is the centre of paired differences (a candidate's log ratios to
// its baseline, one per request pair): the Hodges–Lehmann estimate with its
// 95 % interval, and the two-sided p-value of the Wilcoxon signed-rank test
// that the differences are centred on 0.
type Shift struct {
	N        int     // pairs
	Estimate float64 // median of the Walsh averages
	Lower    float64
	Upper    float64
	// Bounded is false when the pairs are too few for a 95 % interval
	// (fewer than 6): Lower and Upper are then meaningless.
	Bounded bool
	P       float64
}

// exactBelow is the pair count under which the signed-rank null
// distribution is enumerated rather than approximated by a normal one.
const exactBelow = 50

// PairedShift tests and estimates the centre of d. It does not modify d.
func PairedShift(d []float64) Shift {
	s := Shift{N: len(d), P: 1}
	if len(d) == 0 {
		return s
	}
	sorted := slices.Sorted(slices.Values(d))
	s.P = signedRankP(sorted)
	total := len(sorted) * (len(sorted) + 1) / 2
	if total%2 == 1 {
		s.Estimate = walshAt(sorted, (total+1)/2)
	} else {
		s.Estimate = (walshAt(sorted, total/2) + walshAt(sorted, total/2+1)) / 2
	}
	if c := signedRankCritical(len(sorted)); c >= 1 {
		s.Lower, s.Upper, s.Bounded = walshAt(sorted, c), walshAt(sorted, total+1-c), true
	}
	return s
}

// signedRankP is the two-sided p-value of the Wilcoxon signed-rank test on
// sorted differences: zeros dropped, ties given their mean rank; exact
// below 50 pairs without ties, else normal with tie and continuity
// corrections.
func signedRankP(sorted []float64) float64 {
	abs := make([]float64, 0, len(sorted))
	for _, x := range sorted {
		if x != 0 {
			abs = append(abs, math.Abs(x))
		}
	}
	n := len(abs)
	if n == 0 {
		return 1
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	nonzero := make([]float64, 0, n)
	for _, x := range sorted {
		if x != 0 {
			nonzero = append(nonzero, x)
		}
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(abs[a], abs[b]) })
	wPlus, tieTerm, ties := 0.0, 0.0, false
	for i := 0; i < n; {
		j := i
		for j < n && abs[order[j]] == abs[order[i]] {
			j++
		}
		rank := float64(i+j+1) / 2
		for k := i; k < j; k++ {
			if nonzero[order[k]] > 0 {
				wPlus += rank
			}
		}
		if t := float64(j - i); t > 1 {
			ties = true
			tieTerm += t*t*t - t
		}
		i = j
	}
	nf := float64(n)
	mean := nf * (nf + 1) / 4
	if n < exactBelow && !ties {
		dist := signedRankDist(n)
		w := int(math.Round(wPlus))
		lowTail := min(w, n*(n+1)/2-w) // the distribution is symmetric
		p := 0.0
		for s := 0; s <= lowTail; s++ {
			p += dist[s]
		}
		return min(1, 2*p)
	}
	sigma := math.Sqrt(nf*(nf+1)*(2*nf+1)/24 - tieTerm/48)
	if sigma == 0 {
		return 1
	}
	z := max(0, math.Abs(wPlus-mean)-0.5) / sigma
	return math.Erfc(z / math.Sqrt2)
}

// signedRankDist is the null distribution of W+ for n pairs without ties:
// P(W+ = s) for s in 0..n(n+1)/2.
func signedRankDist(n int) []float64 {
	top := n * (n + 1) / 2
	ways := make([]float64, top+1)
	ways[0] = 1
	for r := 1; r <= n; r++ {
		for s := top; s >= r; s-- {
			ways[s] += ways[s-r]
		}
	}
	scale := math.Pow(2, -float64(n))
	for i := range ways {
		ways[i] *= scale
	}
	return ways
}

// signedRankCritical is C, the rank of the Walsh average that is the lower
// end of the 95 % Hodges–Lehmann interval (the upper is rank N+1-C): the
// largest C with P(W+ ≤ C-1) ≤ 2.5 %. Below 1 there is no interval.
func signedRankCritical(n int) int {
	tail := (1 - Confidence) / 2
	if n < exactBelow {
		dist := signedRankDist(n)
		cum, c := 0.0, 0
		for s := 0; s < len(dist); s++ {
			if cum+dist[s] > tail {
				break
			}
			cum += dist[s]
			c = s + 1
		}
		return c
	}
	nf := float64(n)
	sigma := math.Sqrt(nf * (nf + 1) * (2*nf + 1) / 24)
	return int(math.Floor(nf*(nf+1)/4 - distuv.UnitNormal.Quantile(1-tail)*sigma))
}

// walshAt is the k-th smallest (1-based) of the Walsh averages
// (d_i + d_j)/2, i ≤ j, of sorted, found by bisection on their count
// without building all n(n+1)/2 of them.
func walshAt(sorted []float64, k int) float64 {
	lo, hi := sorted[0], sorted[len(sorted)-1]
	for range 200 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if walshCount(sorted, mid) >= k {
			hi = mid
		} else {
			lo = mid
		}
	}
	// hi is at or just above the answer: the largest Walsh average ≤ hi.
	best := math.Inf(-1)
	j := len(sorted) - 1
	for i := range sorted {
		for j >= i && sorted[i]+sorted[j] > 2*hi {
			j--
		}
		if j < i {
			break
		}
		best = max(best, (sorted[i]+sorted[j])/2)
	}
	return best
}

// walshCount is how many Walsh averages of sorted are ≤ x.
func walshCount(sorted []float64, x float64) int {
	count, j := 0, len(sorted)-1
	for i := range sorted {
		for j >= i && sorted[i]+sorted[j] > 2*x {
			j--
		}
		if j < i {
			break
		}
		count += j - i + 1
	}
	return count
}

// Resamples of QuantileRatio's bootstrap.
const pairedResamples = 2000

// QuantileRatio compares the q-quantiles of paired samples: cand[i] was
// measured on the same request as base[i]. It returns the ratio of the
// candidate's quantile to the baseline's and its 95 % percentile-bootstrap
// interval, resampling pair indices (pairs kept together) within each
// stratum (a round: strata[i] names pair i's; nil is one stratum). Seeded,
// so the same samples give the same interval. ok is false without two
// pairs or with a baseline quantile at 0.
func QuantileRatio(base, cand []float64, strata []int, q float64) (ratio, lo, hi float64, ok bool) {
	n := len(base)
	if n < 2 || len(cand) != n || (strata != nil && len(strata) != n) {
		return 0, 0, 0, false
	}
	qb := Quantile(slices.Sorted(slices.Values(base)), q)
	if qb <= 0 {
		return 0, 0, 0, false
	}
	ratio = Quantile(slices.Sorted(slices.Values(cand)), q) / qb
	groups := map[int][]int{}
	for i := range n {
		s := 0
		if strata != nil {
			s = strata[i]
		}
		groups[s] = append(groups[s], i)
	}
	byBase, byCand := sortedIndex(base), sortedIndex(cand)
	counts := make([]int, n)
	rng := rand.New(rand.NewPCG(bootstrapSeed, uint64(n)))
	keys := slices.Sorted(func(yield func(int) bool) {
		for k := range groups {
			if !yield(k) {
				return
			}
		}
	})
	ratios := make([]float64, 0, pairedResamples)
	for range pairedResamples {
		clear(counts)
		for _, k := range keys {
			g := groups[k]
			for range g {
				counts[g[rng.IntN(len(g))]]++
			}
		}
		rb := weightedQuantile(base, byBase, counts, q)
		if rb <= 0 {
			continue
		}
		ratios = append(ratios, weightedQuantile(cand, byCand, counts, q)/rb)
	}
	if len(ratios) < pairedResamples/2 {
		return ratio, 0, 0, false
	}
	slices.Sort(ratios)
	tail := (1 - Confidence) / 2
	return ratio, Quantile(ratios, tail), Quantile(ratios, 1-tail), true
}

// sortedIndex is the permutation that sorts xs.
func sortedIndex(xs []float64) []int {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(xs[a], xs[b]) })
	return idx
}

// weightedQuantile is Quantile of the multiset that holds xs[i] counts[i]
// times, walking xs in the order of idx.
func weightedQuantile(xs []float64, idx []int, counts []int, q float64) float64 {
	total := 0
	for _, c := range counts {
		total += c
	}
	pos := q * float64(total-1)
	lo := int(math.Floor(pos))
	var vlo, vhi float64
	seen, haveLo := 0, false
	for _, i := range idx {
		seen += counts[i]
		if !haveLo && seen > lo {
			vlo, haveLo = xs[i], true
		}
		if seen > min(lo+1, total-1) {
			vhi = xs[i]
			break
		}
	}
	return vlo + (vhi-vlo)*(pos-float64(lo))
}
