package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/internal/testkit"
)

// A gate on a percentile a run measures too few requests for is said at
// --config.check; one it can judge is not.
func TestUnsettled(t *testing.T) {
	b := poissonBurst("b", 80)
	b.MaxRegression = []config.MaxRegression{{Metric: "ttft", Quantile: "p50", MaxIncrease: 0.2}, {Metric: "ttft", Quantile: "p99", MaxIncrease: 0.2}}
	got := BurstOf(b, testkit.Scenario()).Unsettled()
	if len(got) != 1 || !strings.Contains(got[0], "burst b: max_regression ttft p99 needs 368 samples a run and the run plans 80 measured requests") {
		t.Errorf("warnings %q", got)
	}
	b.Requests = 400
	if got := BurstOf(b, testkit.Scenario()).Unsettled(); len(got) != 0 {
		t.Errorf("400 requests a run: warnings %q", got)
	}

	// Between two single runs the assumed spread alone reaches past a 10 %
	// limit, or a 2-point goodput one; under repeat the runs give it.
	b.MaxRegression = []config.MaxRegression{{Metric: "ttft", Quantile: "p50", MaxIncrease: 0.1}, {Metric: config.Goodput, MaxDrop: 0.02},
		{Metric: "tpot", Quantile: "p50", MaxIncrease: 0.2}}
	got = BurstOf(b, testkit.Scenario()).Unsettled()
	if len(got) != 2 || !strings.Contains(got[0], "burst b: max_regression ttft p50: between two single runs its interval reaches at least ±14.5% from the assumed spread alone, past its limit of 10.0%") ||
		!strings.Contains(got[1], "max_regression goodput: between two single runs its interval reaches at least ±2.8 pp from the assumed spread alone, past its limit of 2.0 pp") {
		t.Errorf("warnings %q", got)
	}
	b.Repeat = 3
	if got := BurstOf(b, testkit.Scenario()).Unsettled(); len(got) != 0 {
		t.Errorf("repeat 3: warnings %q", got)
	}
	b.Repeat = 0

	// A 99 % target needs 381 requests all meeting it before its interval
	// shows it met; counted as an error budget, any number does.
	s := testkit.Scenario()
	s.SLO = config.SLO{TTFT: config.Duration(time.Second), TargetRatio: 0.99}
	b.Requests, b.MaxRegression = 200, nil
	got = BurstOf(b, s).Unsettled()
	if len(got) != 1 || !strings.Contains(got[0], "burst b: slo_ttft's target of 99% needs at least 381 measured requests of the scenarios that set it for its interval to show it met, and a run plans 200") {
		t.Errorf("warnings %q", got)
	}
	b.SLORule = config.SLORulePoint
	if got := BurstOf(b, s).Unsettled(); len(got) != 0 {
		t.Errorf("rule point: warnings %q", got)
	}
}

// A sweep whose steps are too short to show its knee is said at
// --config.check: 60 requests a step against a 90 % target, where about
// 411 show 85 % failed; 600 are enough.
func TestUnsettledSweep(t *testing.T) {
	b := poissonBurst("curve", 60)
	b.Sweep = &config.Sweep{Auto: &config.AutoSweep{Start: 4, Step: 4, Max: 24, Resolution: 1, TargetRatio: 0.9}}
	got := BurstOf(b, testkit.Scenario()).Unsettled()
	if len(got) != 1 || !strings.Contains(got[0], "burst curve: its sweep steps plan 60 measured requests; near the knee a step needs about 411 to show a goodput of 85% (halfway from the 90% target to twice its misses) as failed") {
		t.Errorf("warnings %q", got)
	}
	b.Requests = 600
	if got := BurstOf(b, testkit.Scenario()).Unsettled(); len(got) != 0 {
		t.Errorf("600 requests a step: warnings %q", got)
	}
}

// poissonBurst is a burst of requests at 4/s of testkit's scenario.
func poissonBurst(name string, requests int) config.Burst {
	b := config.DefaultBurst
	b.Name, b.Target, b.Requests = name, "t", requests
	b.Scenarios = []config.WeightedScenario{{Scenario: testkit.Scenario().Name, Weight: 1}}
	b.Arrival = config.Arrival{Process: config.ArrivalPoisson, Rate: 4, Burstiness: 1}
	return b
}

// A burst that no gate could judge says so before it runs.
func TestBurstWithNothingToJudgeWarns(t *testing.T) {
	b := config.Burst{Name: "b", Target: "t", Scenarios: []config.WeightedScenario{{Scenario: "s", Weight: 1}}, Requests: 100,
		Arrival: config.Arrival{Process: config.ArrivalConstant, Rate: 5}}
	got := BurstOf(b, testkit.Scenario()).Unsettled()
	if len(got) != 1 || !strings.Contains(got[0], `burst b: nothing to judge: its scenarios set no SLO and it has no max_regression, so a gate measures it and says "measured, nothing judged" (exit 3)`) {
		t.Errorf("warnings %q", got)
	}
	s := testkit.Scenario()
	s.SLO = config.SLO{TTFT: config.Duration(time.Second), TargetRatio: 0.9}
	for _, w := range BurstOf(b, s).Unsettled() {
		if strings.Contains(w, "nothing to judge") {
			t.Errorf("a burst with an SLO: %q", w)
		}
	}
}
