package decide

import (
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/stats"
)

// A failed SLO gate is not certainly the target's when the misses within
// llmprobe's own delay, counted as met, would pass it; when they would not,
// it says so and the failure stands.
func TestSLOGateOwnDelay(t *testing.T) {
	s := config.Scenario{Name: "s", SLO: config.SLO{TTFT: config.Duration(100 * time.Millisecond), TargetRatio: 0.9}}
	for _, tc := range []struct {
		misses, want int
		detail       string
	}{
		{5, 5, "5 of the misses are within llmprobe's own delay (up to 30.0ms), which may have been the whole miss: without it the share could reach 100.00%"},
		{2, 0, "2 misses are within llmprobe's own delay (up to 30.0ms), too few to change the verdict"},
	} {
		g := SLOGates([]config.Scenario{s}, Shares{
			PerObjective: map[string]float64{"ttft": 0.5}, Interval: map[string]stats.Interval{"ttft": *stats.WilsonOf(5, 10)},
			Checked: map[string]int{"ttft": 10}, OwnDelay: map[string]OwnDelayMisses{"ttft": {Requests: tc.misses, UpTo: 0.03}},
		}, config.SLORuleInterval)[0]
		if g.Passed || g.OwnDelay != tc.want || !strings.HasSuffix(g.Detail, tc.detail) {
			t.Errorf("%d misses within the own delay: %+v", tc.misses, g)
		}
	}
}
