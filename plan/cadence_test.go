package plan

import (
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
)

func burst(s config.BurstSchedule) config.Burst {
	return config.Burst{Name: "nightly", Schedule: s}
}

// Every's starts lie on one grid: a period apart, jitter inside its own
// period, the same grid for any seed and from any instant.
func TestEveryKeepsItsGrid(t *testing.T) {
	c := BurstOf(burst(config.BurstSchedule{Every: config.Duration(time.Minute)})).Cadence(1)
	now := time.Date(2026, 11, 28, 12, 0, 30, 0, time.UTC)
	k := c.From(now)
	first := c.Start(k)
	if first.Before(now) || first.Sub(now) >= time.Minute {
		t.Fatalf("first start %s from %s: want within the next minute", first, now)
	}
	for i := int64(1); i <= 100; i++ {
		if got := c.Start(k + i).Sub(first); got != time.Duration(i)*time.Minute {
			t.Fatalf("start %d is %s after the first, want %d min", i, got, i)
		}
	}
	if got := c.From(first); got != k {
		t.Errorf("From(start %d) = %d: a start at the instant itself counts", k, got)
	}
	if got := c.From(first.Add(time.Nanosecond)); got != k+1 {
		t.Errorf("From(just after start %d) = %d", k, got)
	}
	// The phase comes from the name, so a restart keeps it.
	if again := BurstOf(burst(config.BurstSchedule{Every: config.Duration(time.Minute)})).Cadence(99); again.Start(k) != first {
		t.Errorf("another seed moved start %d from %s to %s", k, first, again.Start(k))
	}
	other := BurstOf(config.Burst{Name: "hourly", Schedule: config.BurstSchedule{Every: config.Duration(time.Minute)}}).Cadence(1)
	if other.Start(k) == first {
		t.Errorf("bursts %q and %q share a phase (%s): hash collision in the test's names", "nightly", "hourly", first)
	}

	j := BurstOf(burst(config.BurstSchedule{Every: config.Duration(time.Minute), Jitter: config.Duration(10 * time.Second)})).Cadence(7)
	moved := 0
	for i := k; i < k+200; i++ {
		d := j.Start(i).Sub(c.Start(i))
		if d < 0 || d >= 10*time.Second {
			t.Fatalf("start %d jittered by %s, want within [0, 10s)", i, d)
		}
		if d > 0 {
			moved++
		}
		if same := BurstOf(burst(config.BurstSchedule{Every: config.Duration(time.Minute), Jitter: config.Duration(10 * time.Second)})).Cadence(7); same.Start(i) != j.Start(i) {
			t.Fatalf("start %d differs between two cadences of one seed", i)
		}
		if got := j.From(j.Start(i)); got != i {
			t.Fatalf("From(jittered start %d) = %d", i, got)
		}
	}
	if moved < 150 {
		t.Errorf("only %d of 200 starts jittered", moved)
	}
}

// At's starts are its times of day, in order, every day.
func TestAtTimesOfDay(t *testing.T) {
	c := BurstOf(burst(config.BurstSchedule{At: []string{"22:00", "02:30", "22:00"}})).Cadence(1)
	k := c.From(time.Date(2026, 11, 22, 23, 0, 0, 0, time.UTC))
	want := []time.Time{
		time.Date(2026, 11, 23, 2, 30, 0, 0, time.UTC),
		time.Date(2026, 11, 23, 22, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 24, 2, 30, 0, 0, time.UTC),
	}
	for i, w := range want {
		if got := c.Start(k + int64(i)); !got.Equal(w) {
			t.Errorf("start %d = %s, want %s", i, got, w)
		}
	}
	if BurstOf(burst(config.BurstSchedule{OnStart: true})).Cadence(1) != nil {
		t.Error("a schedule without every or at has a cadence")
	}
}

// Skipped are the starts planned while a run ran: for a run that began at
// start k and ended at end, those after k and before end.
func TestOverrunMissesStarts(t *testing.T) {
	c := BurstOf(burst(config.BurstSchedule{Every: config.Duration(time.Minute)})).Cadence(1)
	k := c.From(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	end := c.Start(k).Add(150 * time.Second)
	next := c.From(end)
	if next != k+3 {
		t.Fatalf("a run of 2m30s from start %d resumes at start %d, want %d", k, next, k+3)
	}
	if c.Start(next).Sub(c.Start(k)) != 3*time.Minute {
		t.Errorf("the run after the overrun starts %s after the overrunning one, want 3m", c.Start(next).Sub(c.Start(k)))
	}
}
