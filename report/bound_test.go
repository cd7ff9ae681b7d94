package report

import (
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/stats"
)

func f(v float64) *float64 { return &v }

func scenarioWith(name string, slo config.SLO) config.Scenario {
	return config.Scenario{Name: name, SLO: slo}
}

func millis(d float64) time.Duration { return time.Duration(d * float64(time.Millisecond)) }

// The limit is a tenth of the tightest threshold of any objective of any
// of the burst's scenarios, or of 50 ms where none is set.
func TestSaturationLimit(t *testing.T) {
	for _, tc := range []struct {
		name      string
		scenarios []config.Scenario
		limit     time.Duration
		objective string
	}{
		{"no scenario", nil, 5 * time.Millisecond, "no objective is set: 50ms stands in"},
		{"no objective", []config.Scenario{scenarioWith("a", config.SLO{TargetRatio: 0.9})}, 5 * time.Millisecond, "no objective is set: 50ms stands in"},
		{"ttft only", []config.Scenario{scenarioWith("a", config.SLO{TTFT: config.Duration(millis(100))})}, 10 * time.Millisecond, "ttft 100ms of scenario a"},
		{"tpot tighter than ttft", []config.Scenario{scenarioWith("a", config.SLO{TTFT: config.Duration(millis(500)), TPOT: config.Duration(millis(40)), E2E: config.Duration(5 * time.Second)})},
			4 * time.Millisecond, "tpot 40ms of scenario a"},
		{"across scenarios", []config.Scenario{
			scenarioWith("long", config.SLO{TTFT: config.Duration(time.Second)}),
			scenarioWith("short", config.SLO{Stall: config.Duration(millis(300)), E2E: config.Duration(millis(800))}),
		}, 30 * time.Millisecond, "stall 300ms of scenario short"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			limit, objective := saturationLimit(tc.scenarios)
			if limit != tc.limit || objective != tc.objective {
				t.Errorf("limit %s (%s), want %s (%s)", limit, objective, tc.limit, tc.objective)
			}
		})
	}
}

// The decision: saturated when the bound's p99 passes the limit; where the
// read side was not sampled, when the dispatch delay alone does; never
// without samples.
func TestClientSaturatedDecision(t *testing.T) {
	ttft100 := []config.Scenario{scenarioWith("a", config.SLO{TTFT: config.Duration(millis(100))})} // limit 10 ms
	dispatch := func(p99, max float64) stats.Summary { return stats.Summary{Count: 30, P99: p99, Max: max} }
	rt := func(sched, gc float64) *stats.RuntimeDelays {
		r := &stats.RuntimeDelays{SchedLatency: stats.Tail{Count: 500, P99: f(sched), Max: f(4 * sched)}}
		if gc > 0 {
			r.GCPause = stats.Tail{Count: 2, P99: f(gc), Max: f(gc)}
		}
		return r
	}
	for _, tc := range []struct {
		name      string
		dispatch  stats.Summary
		runtime   *stats.RuntimeDelays
		scenarios []config.Scenario
		p99       *float64 // the bound's, nil for n/a
		saturated bool
	}{
		{"a quiet run", dispatch(0.00002, 0.0001), rt(0.0002, 0.0003), ttft100, f(0.00052), false},
		{"one late release passes the old 5 ms but not a tenth of 100 ms", dispatch(0.007, 0.009), rt(0.0002, 0), ttft100, f(0.0072), false},
		{"the read side alone passes", dispatch(0.00002, 0.0001), rt(0.012, 0), ttft100, f(0.01202), true},
		{"the parts together pass", dispatch(0.004, 0.004), rt(0.004, 0.003), ttft100, f(0.011), true},
		{"exactly at the limit is not past it", dispatch(0.004, 0.004), rt(0.006, 0), ttft100, f(0.01), false},
		{"no objective: the 5 ms fallback", dispatch(0.001, 0.001), rt(0.0045, 0), nil, f(0.0055), true},
		{"read side not sampled: the dispatch delay decides", dispatch(0.011, 0.02), nil, ttft100, nil, true},
		{"read side not sampled, dispatch within", dispatch(0.001, 0.002), nil, ttft100, nil, false},
		{"nothing measured, read side quiet", stats.Summary{}, rt(0.0002, 0), ttft100, f(0.0002), false},
		{"nothing sampled at all", stats.Summary{}, &stats.RuntimeDelays{}, ttft100, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newErrorBound(tc.dispatch, tc.runtime, tc.scenarios)
			if got := e.Saturated(); got != tc.saturated {
				t.Errorf("saturated %v, want %v: %+v", got, tc.saturated, *e)
			}
			switch {
			case tc.p99 == nil && e.P99 != nil:
				t.Errorf("bound p99 %g, want n/a", *e.P99)
			case tc.p99 != nil && (e.P99 == nil || abs(*e.P99-*tc.p99) > 1e-12):
				t.Errorf("bound p99 %v, want %g", e.P99, *tc.p99)
			}
			if e.P99 != nil && (e.Max == nil || *e.Max < *e.P99) {
				t.Errorf("bound max %v under its p99 %g", e.Max, *e.P99)
			}
		})
	}
}

func abs(x float64) float64 { return max(x, -x) }
