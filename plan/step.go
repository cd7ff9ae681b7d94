package plan

import (
	"math"
	"slices"

	"github.com/llmprobe/llmprobe/config"
)

// Stepper decides a sweep's next rate from the verdicts of the steps
// before it: the listed or auto's linear rates, lowest first, up to the
// first whose goodput is shown below the target; a step with not enough
// evidence either way does not stop it, since the knee may lie above it.
// Then auto bisects the widest gap between the rates run from the highest
// that held to the lowest that failed, until every gap there is within its
// resolution or it has run bisectSteps more: a gap next to a step with
// not enough evidence is where the knee is least known.
type Stepper struct {
	rates      []float64
	resolution float64 // 0: no bisection
	budget     int     // bisecting steps left
	run        []stepRun
	failed     bool // some step failed: the linear rates are done
	current    float64
}

type stepRun struct {
	rate         float64
	held, failed bool
}

// Stepper starts the burst's sweep; a burst without one runs its own rate
// once.
func (b *Burst) Stepper() *Stepper {
	s := &Stepper{rates: b.Rates(), budget: bisectSteps(b.Burst)}
	if b.Sweep != nil && b.Sweep.Auto != nil {
		s.resolution = b.Sweep.Auto.Resolution
	}
	return s
}

// Next is the rate to run next, and whether it bisects; ok is false when
// the sweep is done.
func (s *Stepper) Next() (rate float64, bisect, ok bool) {
	if !s.failed && len(s.rates) > 0 {
		s.current, s.rates = s.rates[0], s.rates[1:]
		return s.current, false, true
	}
	if s.resolution <= 0 || s.budget <= 0 {
		return 0, false, false
	}
	lo, hi, ok := s.widestGap()
	if !ok {
		return 0, false, false
	}
	s.budget--
	s.current = (lo + hi) / 2
	return s.current, true, true
}

// widestGap is the widest gap wider than the resolution between two
// neighbouring rates run, from the highest that held below the lowest that
// failed up to that one; false without both.
func (s *Stepper) widestGap() (lo, hi float64, ok bool) {
	fail, pass := math.Inf(1), math.Inf(-1)
	for _, r := range s.run {
		if r.failed {
			fail = min(fail, r.rate)
		}
	}
	for _, r := range s.run {
		if r.held && r.rate < fail {
			pass = max(pass, r.rate)
		}
	}
	if math.IsInf(fail, 1) || math.IsInf(pass, -1) {
		return 0, 0, false
	}
	var inside []float64
	for _, r := range s.run {
		if r.rate >= pass && r.rate <= fail {
			inside = append(inside, r.rate)
		}
	}
	slices.Sort(inside)
	for i := 1; i < len(inside); i++ {
		if gap := inside[i] - inside[i-1]; gap > s.resolution*(1+1e-9) && gap > hi-lo {
			lo, hi, ok = inside[i-1], inside[i], true
		}
	}
	return lo, hi, ok
}

// Record takes the verdict of the rate Next gave last: held (its goodput
// shown at the target or above), failed (shown below, or stopped), or
// neither (not enough evidence).
func (s *Stepper) Record(held, failed bool) {
	s.run = append(s.run, stepRun{rate: s.current, held: held, failed: failed})
	s.failed = s.failed || failed
}

// bisectSteps is the most steps auto bisects after its linear ones: each
// halves a gap of one step until it is within the resolution.
func bisectSteps(b config.Burst) int {
	if b.Sweep == nil || b.Sweep.Auto == nil || !(b.Sweep.Auto.Resolution > 0) {
		return 0
	}
	a := b.Sweep.Auto
	return max(0, int(math.Ceil(math.Log2(a.Step/a.Resolution)-1e-9)))
}
