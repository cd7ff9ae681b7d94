package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Confidence is the level of every interval llmprobe prints: 95 %, two-sided.
const Confidence = 0.95

// z95 is the standard normal quantile of 97.5 %.
var z95 = distuv.UnitNormal.Quantile(1 - (1-Confidence)/2)

// MinSamples is the fewest samples whose largest value bounds the
// q-quantile from above with 97.5 % confidence: ⌈ln 0.025 / ln q⌉ (p90 36,
// p95 72, p99 368, p99.9 3,688). A q-quantile from fewer is "too few": its
// interval has no upper end.
func MinSamples(q float64) int {
	if q <= 0 {
		return 1
	}
	if q >= 1 {
		return math.MaxInt
	}
	return int(math.Ceil(math.Log((1-Confidence)/2) / math.Log(q)))
}

// QuantileInterval is the distribution-free 95 % interval of the
// q-quantile of sorted, from its order statistics: [X(l), X(u)] with the
// binomial chance of each end missing at most 2.5 %. loOK (hiOK) is false
// when no order statistic bounds that side: too few samples for it.
func QuantileInterval(sorted []float64, q float64) (lo, hi float64, loOK, hiOK bool) {
	return QuantileIntervalAt(sorted, q, len(sorted))
}

// QuantileIntervalAt is QuantileInterval for samples worth eff independent
// ones (EffectiveQuantileN): the ranks of eff draws, read at the same
// points of the sample's distribution, so that eff = n gives the order
// statistics themselves.
func QuantileIntervalAt(sorted []float64, q float64, eff int) (lo, hi float64, loOK, hiOK bool) {
	n := len(sorted)
	eff = min(eff, n)
	if eff < 1 || q <= 0 || q >= 1 {
		return 0, 0, false, false
	}
	at := func(rank int) float64 {
		if eff == n || eff == 1 {
			return sorted[rank-1]
		}
		return Quantile(sorted, float64(rank-1)/float64(eff-1))
	}
	tail := (1 - Confidence) / 2
	b := distuv.Binomial{N: float64(eff), P: q}
	// The count B of samples below the quantile is Binomial(eff, q):
	// X(l) ≤ ξ when B ≥ l, X(u) ≥ ξ when B ≤ u-1 (ranks 1-based).
	// l: the largest rank with P(B ≤ l-1) ≤ tail.
	l := searchRank(eff, func(r int) bool { return b.CDF(float64(r-1)) > tail }) - 1
	if l >= 1 {
		lo, loOK = at(l), true
	}
	// u: the smallest rank with P(B ≤ u-1) ≥ 1 - tail.
	u := searchRank(eff, func(r int) bool { return b.CDF(float64(r-1)) >= 1-tail })
	if u <= eff {
		hi, hiOK = at(u), true
	}
	return lo, hi, loOK, hiOK
}

// searchRank is the smallest rank in 1..n for which f holds (f monotone),
// or n+1.
func searchRank(n int, f func(int) bool) int {
	lo, hi := 1, n+1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if f(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// Wilson is the 95 % Wilson score interval of a proportion of k in n;
// ok is false for n = 0.
func Wilson(k, n int) (lo, hi float64, ok bool) {
	return WilsonAt(k, n, n)
}

// WilsonAt is the Wilson interval of the share k of n requests that are
// worth eff independent ones (EffectiveN): the share over eff; ok is false
// for n = 0.
func WilsonAt(k, n, eff int) (lo, hi float64, ok bool) {
	if n <= 0 || eff <= 0 {
		return 0, 0, false
	}
	p, nf, z2 := float64(k)/float64(n), float64(min(eff, n)), z95*z95
	centre := (p + z2/(2*nf)) / (1 + z2/nf)
	half := z95 / (1 + z2/nf) * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	return max(0, centre-half), min(1, centre+half), true
}

// ProportionDiff is p2 - p1 (k2/n2 - k1/n1) with Newcombe's 95 % interval
// from the two Wilson intervals; ok is false when a side is empty.
func ProportionDiff(k1, n1, k2, n2 int) (diff, lo, hi float64, ok bool) {
	l1, u1, ok1 := Wilson(k1, n1)
	l2, u2, ok2 := Wilson(k2, n2)
	if !ok1 || !ok2 {
		return 0, 0, 0, false
	}
	p1, p2 := float64(k1)/float64(n1), float64(k2)/float64(n2)
	diff = p2 - p1
	lo = diff - math.Sqrt((p2-l2)*(p2-l2)+(u1-p1)*(u1-p1))
	hi = diff + math.Sqrt((u2-p2)*(u2-p2)+(p1-l1)*(p1-l1))
	return diff, lo, hi, true
}

// MeanInterval is the mean of xs with its 95 % Student-t interval (n-1
// degrees of freedom); ok is false below 3 values, where a t interval says
// too little to print.
func MeanInterval(xs []float64) (mean, lo, hi float64, ok bool) {
	n := len(xs)
	if n == 0 {
		return 0, 0, 0, false
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(n)
	if n < 3 {
		return mean, 0, 0, false
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	se := math.Sqrt(ss / float64(n-1) / float64(n))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(1 - (1-Confidence)/2)
	return mean, mean - t*se, mean + t*se, true
}

// WelchT is the two-sided p-value of Welch's t-test that a and b have the
// same mean; ok is false with fewer than 2 values on a side. Without
// variance on either side, p is 0 for different means and 1 for equal.
func WelchT(a, b []float64) (p float64, ok bool) {
	diff, se, df, ok := Welch(a, b)
	switch {
	case !ok:
		return 0, false
	case se == 0 && diff == 0:
		return 1, true
	case se == 0:
		return 0, true
	}
	return 2 * (1 - distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.CDF(math.Abs(diff)/se)), true
}

// Welch is the difference of a's mean and b's, its standard error and
// Welch–Satterthwaite degrees of freedom (NaN without variance); ok is
// false with fewer than 2 values on a side.
func Welch(a, b []float64) (diff, se, df float64, ok bool) {
	if len(a) < 2 || len(b) < 2 {
		return 0, 0, 0, false
	}
	ma, va := meanVar(a)
	mb, vb := meanVar(b)
	sa, sb := va/float64(len(a)), vb/float64(len(b))
	df = (sa + sb) * (sa + sb) / (sa*sa/float64(len(a)-1) + sb*sb/float64(len(b)-1))
	return ma - mb, math.Sqrt(sa + sb), df, true
}

// SD is the sample standard deviation of xs (n−1); 0 below 2 values.
func SD(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	_, v := meanVar(xs)
	return math.Sqrt(v)
}

// meanVar is the mean and the sample variance (n-1) of xs, n ≥ 2.
func meanVar(xs []float64) (mean, variance float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(xs)-1)
}

// McNemar is the exact two-sided p-value of McNemar's test on paired
// pass/fail outcomes, from the discordant pairs alone: b passed on the
// first side only, c on the second only. With no difference each
// discordant pair is either kind with probability 1/2, so p = min(1,
// 2·P(X ≤ min(b, c))) for X ~ Binomial(b+c, 1/2); 1 without discordant pairs.
func McNemar(b, c int) float64 {
	n := b + c
	if n == 0 {
		return 1
	}
	return min(1, 2*distuv.Binomial{N: float64(n), P: 0.5}.CDF(float64(min(b, c))))
}

// PairedProportionDiff is p2 − p1 for two proportions measured on the same
// n = a+b+c+d pairs (a passed on both sides, b on the first only, c on the
// second only, d on neither): (c − b)/n with Newcombe's 95 % hybrid score
// interval for paired data (his method 10: the two Wilson intervals,
// combined with the pairs' correlation φ). ok is false for n = 0.
func PairedProportionDiff(a, b, c, d int) (diff, lo, hi float64, ok bool) {
	n := a + b + c + d
	if n == 0 {
		return 0, 0, 0, false
	}
	l1, u1, _ := Wilson(a+b, n)
	l2, u2, _ := Wilson(a+c, n)
	p1, p2 := float64(a+b)/float64(n), float64(a+c)/float64(n)
	phi := 0.0
	if den := float64(a+b) * float64(c+d) * float64(a+c) * float64(b+d); den > 0 {
		phi = (float64(a)*float64(d) - float64(b)*float64(c)) / math.Sqrt(den)
	}
	diff = p2 - p1
	down := func(x, y float64) float64 { return math.Sqrt(max(0, x*x-2*phi*x*y+y*y)) }
	lo = diff - down(p2-l2, u1-p1)
	hi = diff + down(u2-p2, p1-l1)
	return diff, max(lo, -1), min(hi, 1), true
}

// WilsonToSettle is about how many samples at share p would put the Wilson
// interval wholly on one side of target: the fewest n up to limit (by
// doubling, then bisection); 0 when p is the target or none up to limit
// would.
func WilsonToSettle(p, target float64, limit int) int {
	settles := func(n int) bool {
		lo, hi, _ := Wilson(int(math.Round(p*float64(n))), n)
		return lo >= target || hi < target
	}
	if p == target {
		return 0
	}
	hi := 1
	for !settles(hi) {
		if hi >= limit {
			return 0
		}
		hi = min(2*hi, limit)
	}
	lo := hi / 2
	for lo+1 < hi {
		mid := lo + (hi-lo)/2
		if settles(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}
