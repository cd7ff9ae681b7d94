package alerts

import (
	"testing"
	"time"
)

// LLMProbeComparisonWorse waits at most 2 minutes: the decision it reads is
// valid at every look, so holding it longer only delays a true alert; it
// keeps firing across a fresh epoch, which starts undecided.
func TestComparisonAlertActsOnTheDecision(t *testing.T) {
	forDur, keep, err := Timing("LLMProbeComparisonWorse")
	if err != nil {
		t.Fatal(err)
	}
	if forDur > 2*time.Minute {
		t.Errorf("for: %s, longer than 2 minutes", forDur)
	}
	if keep < 10*time.Minute {
		t.Errorf("keep_firing_for: %s, too short to outlast a fresh epoch's start", keep)
	}
}
