package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// MinBatches is the fewest blocks batch means reads a run's correlation
// from: below it, one run's outcomes count as independent.
const MinBatches = 10

// EffectiveN is what a run's outcomes, in the order the requests arrived,
// are worth as independent draws: requests that queue together miss
// together, so a share of one run varies more than a binomial one. By
// batch means, the outcomes cut into ⌊√n⌋ blocks of consecutive requests:
// n × (the binomial variance of one block's share) / (the blocks'
// variance). It is n unless the blocks vary more than binomial ones would
// at 95 % (the χ² dispersion test, so that independent outcomes keep n
// rather than the noise of the estimate), where the outcomes do not vary,
// or the blocks are too few (MinBatches); never more than n.
func EffectiveN(outcomes []bool) int {
	n := len(outcomes)
	b := int(math.Sqrt(float64(n)))
	if b < MinBatches {
		return n
	}
	size := n / b
	shares := make([]float64, b)
	total := 0.0
	for k := range b {
		met := 0
		for _, ok := range outcomes[k*size : (k+1)*size] {
			if ok {
				met++
			}
		}
		shares[k] = float64(met) / float64(size)
		total += shares[k]
	}
	p := total / float64(b)
	_, v := meanVar(shares)
	if p <= 0 || p >= 1 || v <= 0 {
		return n
	}
	ratio := p * (1 - p) / float64(size) / v
	dispersion := float64(b-1) / ratio // χ² with b−1 degrees of freedom when independent
	critical := distuv.ChiSquared{K: float64(b - 1)}.Quantile(Confidence)
	if ratio >= 1 || math.IsNaN(ratio) || dispersion <= critical {
		return n
	}
	return max(1, int(math.Round(float64(n)*ratio)))
}

// EffectiveQuantileN is EffectiveN of the indicator that each sample, in
// arrival order, lies at or below the q-quantile: what the run's samples
// are worth for that percentile's interval.
func EffectiveQuantileN(inOrder []float64, quantile float64) int {
	below := make([]bool, len(inOrder))
	for i, x := range inOrder {
		below[i] = x <= quantile
	}
	return EffectiveN(below)
}
