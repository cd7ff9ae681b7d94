package decide

import (
	"math"
	"testing"
)

// A regression gate's verdict by the one rule, and llmprobe's own delay
// taken off: it neither hides a regression larger than what it could add
// nor invents one.
func TestRegression(t *testing.T) {
	margin := math.Log1p(0.1)
	for _, tc := range []struct {
		name                     string
		effect, se, low, high    float64
		want                     Verdict
		ownDelayDecides, settles bool
	}{
		{"40% worse", math.Log(1.4), 0.07, math.Log(1.4), math.Log(1.4), Worse, false, false},
		{"40% worse, beyond any own delay", math.Log(1.4), 0.07, math.Log(1.3), math.Log(1.4), Worse, false, false},
		{"40% worse, all of it own delay", math.Log(1.4), 0.07, 0, math.Log(1.4), NotEnough, true, false},
		{"the same", 0, 0.01, 0, 0, Within, false, false},
		{"the same, the baseline's own delay could hide 30%", 0, 0.01, 0, math.Log(1.3), NotEnough, true, false},
		{"8% worse, spread 7%", math.Log(1.08), 0.07, math.Log(1.08), math.Log(1.08), NotEnough, false, true},
		{"30% better", math.Log(0.7), 0.01, math.Log(0.7), math.Log(0.7), Better, false, false},
	} {
		v := Regression(Evidence{Effect: tc.effect, SE: tc.se, Runs: 1, Low: tc.low, High: tc.high}, margin)
		if v.Verdict != tc.want || v.OwnDelayDecides != tc.ownDelayDecides || (v.SettleRuns > 0) != tc.settles || v.Lo > tc.effect || v.Hi < tc.effect {
			t.Errorf("%s: %+v, want %q, own delay decides %v, settles %v", tc.name, v, tc.want, tc.ownDelayDecides, tc.settles)
		}
		var g Gate
		v.Apply(&g)
		if g.Passed != (tc.want == Within || tc.want == Better) || g.Undecided != (tc.want == NotEnough && !tc.ownDelayDecides) || g.OwnDelayDecides != tc.ownDelayDecides {
			t.Errorf("%s: gate %+v", tc.name, g)
		}
	}
	// t with 2 degrees of freedom is wider than the normal.
	if n, t2 := Regression(Evidence{SE: 0.01}, margin), Regression(Evidence{SE: 0.01, DF: 2}, margin); t2.Hi <= n.Hi {
		t.Errorf("t(2) %+v not wider than normal %+v", t2, n)
	}
}

// A sweep step passes when its goodput interval reaches the target, fails
// when it lies below or the step stopped, and has not enough evidence
// across it.
func TestStepVerdict(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		aborted bool
		lo, hi  *float64
		want    Verdict
	}{
		{false, f(0.95), f(1), Passed},
		{false, f(0.80), f(0.88), Failed},
		{false, f(0.85), f(0.97), NotEnough},
		{true, f(0.95), f(1), Failed},
		{false, nil, nil, Failed},
	} {
		if got := StepVerdict(tc.aborted, tc.lo, tc.hi, 0.9); got != tc.want {
			t.Errorf("aborted %v, [%v, %v] against 0.9: %q, want %q", tc.aborted, tc.lo, tc.hi, got, tc.want)
		}
	}
}
