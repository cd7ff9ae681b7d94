package render

import (
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/capacity"
	"github.com/llmprobe/llmprobe/report"
)

// The knee reads as an interval, a lower bound when no step failed, or an
// upper one when none held; capacity then says "at most".
func TestKneeTextSaysWhatTheStepsBound(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		knee report.Knee
		want string
	}{
		{report.Knee{TargetRatio: 0.9, Passing: f(10), Failing: f(10.5), Resolution: 0.5}, "max rate under SLO: in [10, 10.5)/s, bisected to 0.5/s (a step holds when the lower bound of its goodput's 95% interval reaches 90%)"},
		{report.Knee{TargetRatio: 0.9, Passing: f(16)}, "max rate under SLO: at least 16/s, no step failed"},
		{report.Knee{TargetRatio: 0.99, Failing: f(4)}, "max rate under SLO: below 4/s, no step held the SLO"},
	} {
		r := &report.Report{Sweep: []report.SweepStep{{Rate: 4}}, Knee: &c.knee}
		if got := kneeText(r); !strings.HasPrefix(got, c.want) {
			t.Errorf("knee %+v says %q, want %q", c.knee, got, c.want)
		}
	}
	open := capacity.Size(capacity.Config{TargetRate: 100}, 16, true, nil, 1)
	r := &report.Report{Sweep: []report.SweepStep{{Rate: 16, Passed: true}}, Knee: &report.Knee{Passing: f(16), Capacity: &open}}
	checks := planChecks(r)
	if len(checks) != 2 || checks[1].Name != "capacity" || !strings.Contains(checks[1].Detail, "instances at most 7, GPUs at most 7") {
		t.Errorf("checks %+v", checks)
	}
	none := &report.Report{Sweep: []report.SweepStep{{Rate: 4}}, Knee: &report.Knee{Failing: f(4), Why: "no step held the SLO: nothing to size or price"}}
	if checks := planChecks(none); len(checks) != 2 || checks[0].Status != StatusSkipped || checks[1].Status != StatusSkipped {
		t.Errorf("checks of a sweep that held nothing: %+v", checks)
	}
}
