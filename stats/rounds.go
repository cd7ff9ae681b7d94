package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Pooled is an effect combined over rounds: its estimate, 95 % interval
// and standard error, and the spread between the rounds' own estimates.
type Pooled struct {
	Estimate, Lower, Upper float64
	// SE is the estimate's standard error; Between the standard deviation
	// of the true effect from round to round (DerSimonian–Laird τ).
	SE, Between float64
	Rounds      int
}

// PoolRounds combines per-round estimates y[k] of one effect, each with
// its within-round variance v[k], as a random-effects meta-analysis:
// DerSimonian–Laird weights and the Hartung–Knapp interval with its ad hoc
// correction (a variance never below the within-round one), t with
// rounds − 1 degrees of freedom. Requests of one round share its
// conditions, so the rounds, not the requests, are the replicates: the
// interval widens with the rounds' disagreement. A round whose pairs all
// agree (variance 0) counts with the least variance of the others, and
// rounds that all do are pooled by their spread alone; ok is false below
// two rounds or with a variance negative or not finite.
func PoolRounds(y, v []float64) (Pooled, bool) {
	k := len(y)
	p := Pooled{Rounds: k}
	if k < 2 || len(v) != k {
		return p, false
	}
	v, ok := floorVariances(v)
	if !ok {
		return p, false
	}
	if v == nil {
		return spreadOnly(y), true
	}
	var sw, sw2, swy float64
	for i := range y {
		if math.IsNaN(y[i]) {
			return p, false
		}
		w := 1 / v[i]
		sw, sw2, swy = sw+w, sw2+w*w, swy+w*y[i]
	}
	fixed := swy / sw
	q := 0.0
	for i := range y {
		q += (y[i] - fixed) * (y[i] - fixed) / v[i]
	}
	tau2 := math.Max(0, (q-float64(k-1))/(sw-sw2/sw))
	var rw, rwy float64
	for i := range y {
		w := 1 / (v[i] + tau2)
		rw, rwy = rw+w, rwy+w*y[i]
	}
	p.Estimate = rwy / rw
	hk := 0.0
	for i := range y {
		hk += (y[i] - p.Estimate) * (y[i] - p.Estimate) / (v[i] + tau2)
	}
	hk /= float64(k - 1)
	p.SE = math.Sqrt(math.Max(hk, 1) / rw)
	p.Between = math.Sqrt(tau2)
	t := TQuantile(k - 1)
	p.Lower, p.Upper = p.Estimate-t*p.SE, p.Estimate+t*p.SE
	return p, true
}

// floorVariances is v with each 0 raised to the least positive one, nil
// when all are 0; false when one is negative or not finite.
func floorVariances(v []float64) ([]float64, bool) {
	least := math.Inf(1)
	for _, x := range v {
		if x < 0 || math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, false
		}
		if x > 0 {
			least = min(least, x)
		}
	}
	if math.IsInf(least, 1) {
		return nil, true
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x
		if x == 0 {
			out[i] = least
		}
	}
	return out, true
}

// spreadOnly pools rounds whose pairs each agree exactly (no within-round
// variance): the t interval on the rounds' estimates alone, a point when
// they agree too.
func spreadOnly(y []float64) Pooled {
	k := float64(len(y))
	p := Pooled{Rounds: len(y)}
	for _, x := range y {
		p.Estimate += x / k
	}
	ss := 0.0
	for _, x := range y {
		ss += (x - p.Estimate) * (x - p.Estimate)
	}
	p.Between = math.Sqrt(ss / (k - 1))
	p.SE = p.Between / math.Sqrt(k)
	t := TQuantile(len(y) - 1)
	p.Lower, p.Upper = p.Estimate-t*p.SE, p.Estimate+t*p.SE
	return p
}

// TQuantile is Student's t at 97.5 % with df degrees of freedom: the
// half-width of a 95 % interval in standard errors; df 0 gives the
// normal's, an interval whose error is known.
func TQuantile(df int) float64 {
	if df <= 0 {
		return z95
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(1 - (1-Confidence)/2)
}

// RoundsToSettle is how many rounds at the observed spread would put an
// interval around est, whose standard error over rounds rounds is se, wholly
// on one side of margin: the fewest k with t(k−1)·se·√(rounds/k) <
// |est − margin|; 0 when no count up to limit would.
func RoundsToSettle(est, se float64, rounds int, margin float64, limit int) int {
	gap := math.Abs(est - margin)
	for k := max(rounds, 2); k <= limit; k++ {
		if TQuantile(k-1)*se*math.Sqrt(float64(rounds)/float64(k)) < gap {
			return k
		}
	}
	return 0
}

// SEOf is the standard error behind a 95 % normal interval [lo, hi].
func SEOf(lo, hi float64) float64 { return (hi - lo) / (2 * z95) }
