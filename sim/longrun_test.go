package sim

import (
	"reflect"
	"testing"
	"time"
)

// sweepEngine is the engine of the documented sweep (docs/decisions.md):
// 4 slots, 5 ms decode steps growing 1 ms a sequence.
func sweepEngine() Config {
	cfg := DefaultConfig()
	cfg.MaxBatch, cfg.DecodeBase, cfg.DecodePerSeq = 4, 5*time.Millisecond, time.Millisecond
	return cfg
}

// Alone in the engine, a request's TTFT is its prefill step (20 ms + 64 ×
// 50 µs = 23.2 ms) and its TPOT one decode step (5 ms), to the nanosecond:
// the virtual clock runs the engine's own cost model.
func TestLongRunAloneCostsOneStep(t *testing.T) {
	w := Workload{Rate: 0.01, Duration: time.Hour, PromptTokens: 64, OutputTokens: 32, Seed: 1}
	for _, c := range []struct {
		ttft, tpot time.Duration
		allGood    bool
	}{
		{23200 * time.Microsecond, 5 * time.Millisecond, true},
		{23199 * time.Microsecond, 5 * time.Millisecond, false},
		{23200 * time.Microsecond, 4999 * time.Microsecond, false},
	} {
		w.TTFT, w.TPOT = c.ttft, c.tpot
		r, err := LongRun(sweepEngine(), w)
		if err != nil {
			t.Fatal(err)
		}
		if r.Requests < 20 || r.Rejected != 0 {
			t.Fatalf("%+v", r)
		}
		if (r.Good == r.Requests) != c.allGood || (r.Good == 0) == c.allGood {
			t.Errorf("objectives %s / %s: %d of %d good", c.ttft, c.tpot, r.Good, r.Requests)
		}
	}
}

// The long-run goodput falls with the rate, past the knee to nothing (a
// full queue refuses), the same seed gives the same hour, and the knee of
// the documented sweep lies near 8.9/s.
func TestLongRunKnee(t *testing.T) {
	w := Workload{Duration: time.Hour, PromptTokens: 64, OutputTokens: 32, TTFT: 300 * time.Millisecond, TPOT: 100 * time.Millisecond, Seed: 7}
	prev := 1.0
	for _, rate := range []float64{4, 8, 10, 12} {
		w.Rate = rate
		r, err := LongRun(sweepEngine(), w)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := LongRun(sweepEngine(), w)
		if !reflect.DeepEqual(again, r) {
			t.Errorf("rate %g: %+v, then %+v", rate, r, again)
		}
		if g := r.Goodput(); g > prev {
			t.Errorf("goodput rose to %.3f at %g/s", g, rate)
		}
		prev = r.Goodput()
		t.Logf("%g/s: %d requests, %d rejected, goodput %.3f", rate, r.Requests, r.Rejected, r.Goodput())
	}
	if prev > 0.05 {
		t.Errorf("goodput %.3f at 12/s, far past the knee", prev)
	}
	knee, err := LongRunKnee(sweepEngine(), w, 0.9, 1, 24, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if knee < 8 || knee > 10 {
		t.Errorf("long-run knee %.2f/s", knee)
	}
	t.Logf("long-run 90 %% goodput knee: %.2f/s", knee)
}

func TestLongRunRefusesNoLoad(t *testing.T) {
	if _, err := LongRun(sweepEngine(), Workload{Duration: time.Hour, OutputTokens: 1}); err == nil {
		t.Error("no rate: no error")
	}
}
