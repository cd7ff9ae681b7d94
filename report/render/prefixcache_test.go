package render

import (
	"testing"

	"github.com/llmprobe/llmprobe/report"
	"github.com/llmprobe/llmprobe/stats"
)

// The heading follows the figures: the cache is said to serve the history
// only where the cached tokens grew past turn 1's; otherwise it says what
// the cached tokens and TTFT by turn show, and nothing without a later turn.
func TestHeadingFollowsTheData(t *testing.T) {
	turn := func(n int, p50 float64, cached ...float64) report.TurnSummary {
		ts := report.TurnSummary{Scenario: "chat", Turn: n, TTFT: stats.Summary{Count: 10, P50: p50}}
		if len(cached) > 0 {
			ts.CachedTokens = &cached[0]
		}
		return ts
	}
	for _, tc := range []struct {
		name  string
		turns []report.TurnSummary
		want  string
	}{
		{"cached history", []report.TurnSummary{turn(1, 0.1, 512), turn(2, 0.12, 1024)},
			"Conversations, TTFT by turn (cached tokens grew from turn 2: the prefix cache serves the history)"},
		{"no cache reported, TTFT rose", []report.TurnSummary{turn(1, 0.1), turn(2, 0.2), turn(3, 0.3)},
			"Conversations, TTFT by turn (the engine reported no cached tokens; TTFT rose with the history: the prefix cache does not serve it)"},
		{"zero cached, TTFT rose", []report.TurnSummary{turn(1, 0.1, 0), turn(2, 0.2, 0)},
			"Conversations, TTFT by turn (0 cached tokens from turn 2; TTFT rose with the history: the prefix cache does not serve it)"},
		{"shared prefix only, TTFT rose", []report.TurnSummary{turn(1, 0.1, 512), turn(2, 0.2, 512)},
			"Conversations, TTFT by turn (no more cached tokens from turn 2 than at turn 1; TTFT rose with the history: the prefix cache does not serve it)"},
		{"no cache reported, TTFT fell", []report.TurnSummary{turn(1, 0.2), turn(2, 0.1)},
			"Conversations, TTFT by turn (the engine reported no cached tokens; TTFT fell after turn 1 although the prompt grew)"},
		{"no cache reported, TTFT mixed", []report.TurnSummary{turn(1, 0.2), turn(2, 0.1), turn(3, 0.3)},
			"Conversations, TTFT by turn (the engine reported no cached tokens)"},
		{"no later turn", []report.TurnSummary{turn(1, 0.2)}, "Conversations, TTFT by turn"},
	} {
		if got := TurnsHeading(tc.turns); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}
