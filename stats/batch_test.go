package stats

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// Independent outcomes keep about their count; outcomes that come in runs
// (a queue that misses together) are worth far fewer; constant ones and
// short runs keep n.
func TestEffectiveN(t *testing.T) {
	// Independent outcomes keep n but where the dispersion test's 5 % of
	// false alarms fall: 20 runs, expected 19 at n.
	kept := 0
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 2))
		independent := make([]bool, 900)
		for i := range independent {
			independent[i] = rng.Float64() < 0.9
		}
		if got := EffectiveN(independent); got == 900 {
			kept++
		} else if got < 300 || got > 900 {
			t.Errorf("independent, seed %d: %d of 900", seed, got)
		}
	}
	if kept < 17 {
		t.Errorf("independent: %d of 20 runs kept n", kept)
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

// Samples in the order they came: where the slow ones cluster (a queue
// falling behind), the median's interval widens to what they are worth and
// a p90 of 900 samples worth fewer than 36 is too few; spread evenly,
// they are summarized as Summarize does.
func TestSummarizeInOrder(t *testing.T) {
	clustered, even := make([]float64, 900), make([]float64, 900)
	for i := range clustered {
		clustered[i] = 0.05 + 0.001*float64(i%7)
		if i%300 < 150 { // half of every 300 requests slow, in one run
			clustered[i] += 0.1
		}
		even[i] = 0.05 + 0.001*float64(i%7)
		if i%2 == 0 {
			even[i] += 0.1
		}
	}
	c, e := SummarizeInOrder(clustered), SummarizeInOrder(even)
	plain := Summarize(append([]float64(nil), even...)).Intervals["p50"]
	if len(e.Effective) != 0 || *e.Intervals["p50"].Lo != *plain.Lo || *e.Intervals["p50"].Hi != *plain.Hi {
		t.Errorf("even: %+v", e)
	}
	ci, ei := c.Intervals["p50"], e.Intervals["p50"]
	if c.Effective["p50"] == 0 || c.Effective["p50"] >= 900 || ci.Lo == nil || ci.Hi == nil || *ci.Hi-*ci.Lo <= *ei.Hi-*ei.Lo {
		t.Errorf("clustered: worth %v, p50 interval %v–%v, even's %v–%v", c.Effective, ci.Lo, ci.Hi, ei.Lo, ei.Hi)
	}
	if c.Effective["p90"] < 36 != c.IsTooFew("p90") || (c.IsTooFew("p90") && !strings.Contains(c.TooFewText("p90"), "p90 from 900 samples worth ")) {
		t.Errorf("clustered p90: worth %d, too few %v: %q", c.Effective["p90"], c.IsTooFew("p90"), c.TooFewText("p90"))
	}
}
