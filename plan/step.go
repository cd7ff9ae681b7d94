package plan

import (
	"math"

	"github.com/llmprobe/llmprobe/config"
)

// Stepper decides a sweep's next rate from the verdicts of the steps
// before it: the listed or auto's linear rates, lowest first, up to the
// first that fails; then auto bisects between the last passing and the
// first failing rate until they are its resolution apart.
type Stepper struct {
	rates      []float64
	resolution float64 // 0: no bisection
	pass, fail float64
	passed     bool // some step passed: pass holds a rate
	failed     bool // some step failed: fail holds a rate
	current    float64
}

// Stepper starts the burst's sweep; a burst without one runs its own rate
// once.
func (b *Burst) Stepper() *Stepper {
	s := &Stepper{rates: b.Rates()}
	if b.Sweep != nil && b.Sweep.Auto != nil {
		s.resolution = b.Sweep.Auto.Resolution
	}
	return s
}

// Next is the rate to run next, and whether it bisects; ok is false when
// the sweep is done.
func (s *Stepper) Next() (rate float64, bisect, ok bool) {
	switch {
	case !s.failed && len(s.rates) > 0:
		s.current, s.rates = s.rates[0], s.rates[1:]
		return s.current, false, true
	case s.failed && s.passed && s.resolution > 0 && s.fail-s.pass > s.resolution*(1+1e-9):
		s.current = (s.pass + s.fail) / 2
		return s.current, true, true
	}
	return 0, false, false
}

// Record takes the verdict of the rate Next gave last.
func (s *Stepper) Record(passed bool) {
	switch {
	case passed && (!s.passed || s.current > s.pass):
		s.pass, s.passed = s.current, true
	case !passed && (!s.failed || s.current < s.fail):
		s.fail, s.failed = s.current, true
	}
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
