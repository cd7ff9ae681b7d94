package stats

import (
	"math/rand/v2"
	"testing"
)

// Independent outcomes keep about their count; outcomes that come in runs
// (a queue that misses together) are worth far fewer; constant ones and
// short runs keep n.
func TestEffectiveN(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	independent := make([]bool, 900)
	for i := range independent {
		independent[i] = rng.Float64() < 0.9
	}
	if got := EffectiveN(independent); got < 500 || got > 900 {
		t.Errorf("independent: %d of 900", got)
	}
	// Misses in 6 bursts of 15 consecutive requests: 90 % met overall.
	bursty := make([]bool, 900)
	for i := range bursty {
		bursty[i] = !(i%150 < 15)
	}
	if got := EffectiveN(bursty); got > 300 {
		t.Errorf("bursty: %d of 900, want far fewer", got)
	}
	allMet := make([]bool, 900)
	for i := range allMet {
		allMet[i] = true
	}
	if got := EffectiveN(allMet); got != 900 {
		t.Errorf("all met: %d", got)
	}
	// Misses spread evenly vary less than binomial ones: n, never more.
	even := make([]bool, 100)
	for i := range even {
		even[i] = i%5 != 0
	}
	if got := EffectiveN(even); got != 100 {
		t.Errorf("even: %d, want 100", got)
	}
	if got := EffectiveN(bursty[:80]); got != 80 {
		t.Errorf("80 outcomes, 8 blocks: %d, want 80", got)
	}
}
