package burst

import (
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/plan"
)

// repeat: 3 sends the burst three times, one after another: the report is
// the last run's, with every figure of the three and their means' intervals.
func TestRepeatRunsTheBurstNTimes(t *testing.T) {
	c, e := serialSim(t, 64)
	b := burstOf(config.ArrivalConstant, 20, 0)
	b.Requests, b.Repeat = 8, 3
	rep := runAt(t, c, b)
	if rep.Repeat == nil || rep.Repeat.Runs != 3 || len(rep.Repeat.RunIDs) != 3 || rep.Repeat.RunIDs[2] != rep.ID || rep.Requests != 8 {
		t.Fatalf("repeat %+v, report %s of %d requests: want 3 runs, this the last", rep.Repeat, rep.ID, rep.Requests)
	}
	if n := e.Stats().Completed; n < 3*8 {
		t.Errorf("the sim served %d requests, want at least 3 runs of 8", n)
	}
	f := rep.Repeat.Figure("ttft", "p50")
	if f == nil || len(f.Values) != 3 || f.Mean == nil || f.Interval == nil || *f.Interval.Lo > *f.Mean || *f.Interval.Hi < *f.Mean {
		t.Errorf("ttft p50 across the runs: %+v, want 3 values and their mean inside its interval", f)
	}
	if f.Mean != nil && time.Duration(*f.Mean*1e9) < 20*time.Millisecond {
		t.Errorf("ttft p50 mean %gs under the sim's 20ms prefill", *f.Mean)
	}
}

// A repeated burst is due to finish after all its runs, not the first.
func TestRepeatedRunLength(t *testing.T) {
	b := burstOf(config.ArrivalConstant, 10, 0)
	b.Requests = 100
	once := plan.BurstOf(b, burstScenario()).RunLength(30 * time.Second)
	b.Repeat = 3
	if thrice := plan.BurstOf(b, burstScenario()).RunLength(30 * time.Second); once != 40*time.Second || thrice != 3*once {
		t.Errorf("run length %s once, %s three times", once, thrice)
	}
}
