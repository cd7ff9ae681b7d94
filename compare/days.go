package compare

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/decide"
)

// dayCase is a candidate against its baseline as simulated days see them:
// per metric (TTFT, TPOT, ITL, E2E) the true log ratio of the candidate's
// median to the baseline's, and the spread of one pair's log ratio around
// it, normal or, with HeavyTails, Student's t with 3 degrees of freedom (the
// same variance, far longer tails).
type dayCase struct {
	Name       string
	Shift      [4]float64
	Noise      [4]float64
	HeavyTails bool
}

// alerting is how the alert reads the decision: Prometheus evaluates the
// rule every Every and fires once a fail has been seen for For.
type alerting struct{ Every, For time.Duration }

// daysResult is what simulated days of one case came to.
type daysResult struct {
	Days int
	// ToAlert holds, for each day the alert fired, how long after the
	// day's start it did; ToPass, for each day the comparison decided pass,
	// how long after the start it first did. Sorted.
	ToAlert, ToPass []time.Duration
}

// simulateDays runs the always-on judge (the code the daemon runs) through
// days of pairs on a virtual clock: a comparison cmp whose scenario ticks
// every interval, each pair at a random moment of its tick as the daemon
// sends it, identities unchanged, the alert applied as al says. Each day
// starts with llmprobe.
func simulateDays(c dayCase, cmp config.Comparison, interval time.Duration, al alerting, days int, seed uint64) daysResult {
	rng := rand.New(rand.NewPCG(seed, 38))
	out := daysResult{Days: days}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for range days {
		j := newJudge(cmp.Window.Std(), cmp.Tolerance, cmp.MinPairs, 1)
		j.begin(t0, identity{}, identity{})
		var pendingSince time.Time
		alerted, passed := false, false
		next := t0.Add(al.Every)
		for tick := t0; tick.Before(t0.Add(24*time.Hour)) && !(alerted && passed); tick = tick.Add(interval) {
			at := tick.Add(time.Duration(rng.Int64N(int64(interval))))
			for ; !next.After(at); next = next.Add(al.Every) { // the rule's evaluations before this pair
				if !alerted && failing(j) {
					if pendingSince.IsZero() {
						pendingSince = next
					}
					if next.Sub(pendingSince) >= al.For {
						alerted = true
						out.ToAlert = append(out.ToAlert, next.Sub(t0))
					}
				} else {
					pendingSince = time.Time{}
				}
			}
			j.observe(at, identity{}, identity{})
			j.add(c.pair(rng), at)
			if !passed && j.ep.decision == decide.DecisionPass {
				passed = true
				out.ToPass = append(out.ToPass, at.Sub(t0))
			}
		}
	}
	slices.Sort(out.ToAlert)
	slices.Sort(out.ToPass)
	return out
}

// failing is what the alert's expression selects: a metric decided fail.
func failing(j *judge) bool {
	for _, h := range j.ep.held {
		if h.decision == decide.DecisionFail {
			return true
		}
	}
	return false
}

// pair draws one pair: a baseline whose requests differ from each other
// far more than the pair's noise, and the candidate at the case's ratio.
func (c dayCase) pair(rng *rand.Rand) alwaysOnPair {
	var p alwaysOnPair
	for m := range numMetrics {
		z := rng.NormFloat64()
		if c.HeavyTails {
			// t with 3 df, scaled to unit variance: Z / sqrt(χ²₃/3) / sqrt(3).
			chi := 0.0
			for range 3 {
				v := rng.NormFloat64()
				chi += v * v
			}
			z = z / math.Sqrt(chi/3) / math.Sqrt(3)
		}
		base := 0.05 * (1 + 4*rng.Float64())
		p.base[m], p.cand[m] = base, base*math.Exp(c.Shift[m]+c.Noise[m]*z)
	}
	return p
}

// dayCases are the cases the calibration runs: identical targets at
// per-pair noise from 0.04 to 0.5 (the sim's: TTFT 0.37 with heavy tails,
// the rest 0.04), a candidate 5 % slower in decode (inside a 10 %
// tolerance) and one 10 % slower (on it: the worst case for false alarms),
// and one 20 % slower in decode at noise 0.04, 0.2 and 0.5.
// WithinTolerance says whether a fail is a false alarm.
func dayCases() []struct {
	dayCase
	WithinTolerance bool
} {
	same := func(s float64) [4]float64 { return [4]float64{s, s, s, s} }
	sim := [4]float64{0.37, 0.04, 0.04, 0.04}
	l5, l10, l20, e20 := math.Log(1.05), math.Log(1.1), math.Log(1.2), math.Log(1.18) // E2E: decode is most of it
	return []struct {
		dayCase
		WithinTolerance bool
	}{
		{dayCase{Name: "identical, noise 0.04", Noise: same(0.04)}, true},
		{dayCase{Name: "identical, noise 0.2", Noise: same(0.2)}, true},
		{dayCase{Name: "identical, the sim's noise (t3 tails)", Noise: sim, HeavyTails: true}, true},
		{dayCase{Name: "identical, noise 0.5", Noise: same(0.5)}, true},
		{dayCase{Name: "5 % slower decode, the sim's noise", Shift: [4]float64{0, l5, l5, l5}, Noise: sim}, true},
		{dayCase{Name: "10 % slower decode, on the tolerance", Shift: [4]float64{0, l10, l10, l10}, Noise: sim}, true},
		{dayCase{Name: "20 % slower decode, noise 0.04", Shift: [4]float64{0, l20, l20, e20}, Noise: sim}, false},
		{dayCase{Name: "20 % slower decode, noise 0.2", Shift: [4]float64{0, l20, l20, e20}, Noise: [4]float64{0.37, 0.2, 0.2, 0.2}}, false},
		{dayCase{Name: "20 % slower decode, noise 0.5", Shift: [4]float64{0, l20, l20, e20}, Noise: same(0.5)}, false},
	}
}

// alertAt is the time to alert that q of the days stay within, counting
// the days without an alert as later than any; false when more than 1 − q
// of them had none.
func (r daysResult) alertAt(q float64) (time.Duration, bool) {
	return durationAt(r.ToAlert, r.Days, q)
}

// passAt is alertAt for the first pass decision.
func (r daysResult) passAt(q float64) (time.Duration, bool) {
	return durationAt(r.ToPass, r.Days, q)
}

func durationAt(sorted []time.Duration, days int, q float64) (time.Duration, bool) {
	i := int(math.Ceil(q*float64(days))) - 1
	if i < 0 || i >= len(sorted) {
		return 0, false
	}
	return sorted[i], true
}
