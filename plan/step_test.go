package plan

import (
	"slices"
	"testing"

	"github.com/llmprobe/llmprobe/config"
)

// run drives a stepper against a target that holds the SLO up to knee.
func run(s *Stepper, knee float64) (rates []float64, bisects int) {
	return runUnclear(s, knee, knee)
}

// runUnclear drives a stepper against a target shown to hold the SLO up to
// held, shown not to from failed on, with not enough evidence between.
func runUnclear(s *Stepper, held, failed float64) (rates []float64, bisects int) {
	for rate, bisect, ok := s.Next(); ok; rate, bisect, ok = s.Next() {
		rates = append(rates, rate)
		if bisect {
			bisects++
		}
		s.Record(rate <= held, rate >= failed)
	}
	return rates, bisects
}

// A step with not enough evidence does not stop the sweep, and the
// bisection spends its steps on the widest gap between the highest rate
// that held and the lowest that failed.
func TestStepperGoesPastNotEnoughEvidence(t *testing.T) {
	for _, c := range []struct {
		held, failed float64
		want         []float64
	}{
		// 4 and 8 hold, 12 fails; 10 fails, 9 is unclear; gaps of 1 left.
		{8, 10, []float64{4, 8, 12, 10, 9}},
		// 8 is unclear, so 12 runs; then the gaps (4, 8) and (8, 12).
		{5, 11, []float64{4, 8, 12, 6, 10}},
	} {
		rates, _ := runUnclear(stepperOf(autoBurst(4, 4, 24, 1)), c.held, c.failed)
		if !slices.Equal(rates, c.want) {
			t.Errorf("held to %g, failed from %g: rates %v, want %v", c.held, c.failed, rates, c.want)
		}
	}
}

func autoBurst(start, step, maxRate, resolution float64) config.Burst {
	b := config.DefaultBurst
	b.Sweep = &config.Sweep{Auto: &config.AutoSweep{Start: start, Step: step, Max: maxRate, Resolution: resolution}}
	return b
}

func TestStepperBisectsToTheResolution(t *testing.T) {
	rates, bisects := run(stepperOf(autoBurst(2, 4, 30, 0.5)), 11.3)
	// 2, 6, 10 pass, 14 fails; then 12 fails, 11 passes, 11.5 fails: 0.5 apart.
	want := []float64{2, 6, 10, 14, 12, 11, 11.5}
	if len(rates) != len(want) || bisects != 3 {
		t.Fatalf("rates %v (%d bisecting), want %v", rates, bisects, want)
	}
	for i := range want {
		if rates[i] != want[i] {
			t.Fatalf("rates %v, want %v", rates, want)
		}
	}
	if n := bisectSteps(autoBurst(2, 4, 30, 0.5)); n != 3 {
		t.Errorf("bisectSteps = %d, want the 3 it took", n)
	}
}

func TestStepperStopsWithoutAKnee(t *testing.T) {
	// Every step passes: no failing rate, nothing to bisect.
	if rates, bisects := run(stepperOf(autoBurst(1, 1, 4, 0.25)), 100); len(rates) != 4 || bisects != 0 {
		t.Errorf("rates %v, %d bisecting", rates, bisects)
	}
	// The first step fails: no passing rate, nothing to bisect either.
	if rates, bisects := run(stepperOf(autoBurst(5, 1, 9, 0.25)), 1); len(rates) != 1 || bisects != 0 {
		t.Errorf("rates %v, %d bisecting", rates, bisects)
	}
	// A list stops at its first failing rate and does not bisect.
	b := config.DefaultBurst
	b.Sweep = &config.Sweep{Rates: []float64{8, 2, 4}}
	if rates, bisects := run(stepperOf(b), 3); len(rates) != 2 || rates[1] != 4 || bisects != 0 {
		t.Errorf("rates %v, %d bisecting", rates, bisects)
	}
	// Resolution = step: linear steps only.
	if rates, bisects := run(stepperOf(autoBurst(2, 2, 10, 2)), 5); len(rates) != 3 || bisects != 0 {
		t.Errorf("rates %v, %d bisecting", rates, bisects)
	}
}
