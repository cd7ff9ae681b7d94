package burst

import (
	"context"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/target"
)

func schedulerConfig(t *testing.T, url, every string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(`targets: [{name: t, url: "`+url+`", model: m}]
scenarios: [{name: s, prompt_tokens: 8, output_tokens: 2}]
bursts:
  - {name: b, target: t, scenarios: [{scenario: s}], arrival: {rate: 10}, requests: 3, schedule: {every: `+every+`}}
  - {name: manual, target: t, scenarios: [{scenario: s}], arrival: {rate: 10}, requests: 3}
`), "test")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// A reload keeps an unchanged burst's loop, restarts a changed one (its
// schedule or its target's client), and never schedules a gate-only burst.
func TestBurstSchedulerApply(t *testing.T) {
	s := NewScheduler(context.Background(), log.NewNopLogger(), Runner{}, nil)
	defer s.Stop()
	targets := target.NewSet(log.NewNopLogger())
	defer targets.Stop()

	cfg := schedulerConfig(t, "http://127.0.0.1:1", "1h")
	s.Apply(cfg, targets.Apply(context.Background(), cfg))
	first := s.running["b"]
	if first == nil || s.running["manual"] != nil {
		t.Fatalf("running loops: %v", s.running)
	}
	s.Apply(cfg, targets.Apply(context.Background(), cfg))
	if s.running["b"] != first {
		t.Error("an unchanged burst was restarted")
	}
	changed := schedulerConfig(t, "http://127.0.0.1:1", "2h")
	s.Apply(changed, targets.Apply(context.Background(), changed))
	second := s.running["b"]
	if second == first {
		t.Error("a changed schedule kept the old loop")
	}
	moved := schedulerConfig(t, "http://127.0.0.1:2", "2h")
	s.Apply(moved, targets.Apply(context.Background(), moved))
	if s.running["b"] == second {
		t.Error("a new target URL kept the loop with the old client")
	}
}

func TestNextBurstTime(t *testing.T) {
	now := time.Date(2026, 11, 22, 23, 0, 0, 0, time.UTC)
	at := config.BurstSchedule{At: []string{"02:30", "22:00"}}
	if got := nextBurstTime(at, now, nil); got != 3*time.Hour+30*time.Minute {
		t.Errorf("next of 02:30/22:00 at 23:00 = %s, want 3h30m", got)
	}
	if got := nextBurstTime(config.BurstSchedule{}, now, nil); got != -1 {
		t.Errorf("no schedule = %s, want -1", got)
	}
}
