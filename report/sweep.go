package report

import (
	"math"
	"time"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/decide"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/stats"
)

// SweepStep is one rate of a sweep, with the figures its own report had:
// together the steps are the QPS–latency curve.
type SweepStep struct {
	Rate         float64  `json:"rate"`
	AchievedRate *float64 `json:"achieved_rate"`
	GoodputRatio *float64 `json:"goodput_ratio"`
	TTFTP99      *float64 `json:"ttft_p99"`
	// Passed: the step ran to its end and the lower bound of its goodput
	// ratio's 95 % interval reached the target ratio. Verdict says it in a
	// word: passed, failed (the interval below the target, or stopped), or
	// not enough evidence (across it); absent in older reports.
	Passed  bool           `json:"passed"`
	Verdict decide.Verdict `json:"verdict,omitempty"`
	// The step's own error bound and saturation verdict (null in older reports).
	ErrorBoundP99   *float64 `json:"error_bound_p99"`
	ErrorBoundMax   *float64 `json:"error_bound_max"`
	ClientSaturated bool     `json:"client_saturated"`

	// Bisect marks a step auto ran between a passing and a failing rate.
	Bisect bool `json:"bisect,omitempty"`
	// Good of Judged requests were good (cancelled ones are not judged);
	// GoodputLower and GoodputUpper bound the ratio (Wilson, 95 %) over
	// Effective, what they are worth as independent draws where fewer
	// (batch means).
	Good         int                      `json:"good"`
	Judged       int                      `json:"judged"`
	Effective    int                      `json:"effective_n,omitempty"`
	GoodputLower *float64                 `json:"goodput_lower"`
	GoodputUpper *float64                 `json:"goodput_upper"`
	Requests     int                      `json:"requests"`
	Planned      int                      `json:"planned_requests"`
	Outcomes     map[prober.Outcome]int   `json:"outcomes"`
	Aborted      bool                     `json:"aborted,omitempty"`
	Latency      map[string]stats.Summary `json:"latency"`
	Throughput   Throughput               `json:"throughput"`
	// Cost prices the step's achieved output, where cost: is configured.
	Cost *CostPrice `json:"cost,omitempty"`
}

// Knee is what a sweep found: the highest rate that held the SLO and the
// lowest above it that did not, so the maximum lies in [Passing, Failing);
// with no failing step, it is at least Passing.
type Knee struct {
	TargetRatio float64  `json:"target_ratio"`
	Passing     *float64 `json:"passing"`
	Failing     *float64 `json:"failing"`
	// Resolution is how close auto's bisection brings the two (0: a list
	// of rates, not bisected).
	Resolution float64 `json:"resolution,omitempty"`
	// Objectives are the tightest latency objectives of the burst's
	// scenarios, in seconds by metric: the curve's SLO lines.
	Objectives map[string]float64 `json:"objectives,omitempty"`
	// Capacity and Cost are at Passing, where capacity: and cost: are set;
	// Fleet prices the capacity's fleet at its target rate, where both are.
	Capacity *CapacityPlan `json:"capacity,omitempty"`
	Cost     *CostPrice    `json:"cost,omitempty"`
	Fleet    *FleetCost    `json:"fleet_cost,omitempty"`
	// Why says why Capacity or Cost could not be given.
	Why string `json:"why,omitempty"`
}

// curveMetrics are the latencies each step keeps whole.
var curveMetrics = []string{"ttft", "tpot", "itl", "e2e"}

// SweepBuilder gathers the steps of a rate sweep, decides whether each held the
// SLO, and makes the sweep's report from the highest step that did.
type SweepBuilder struct {
	burst   config.Burst
	meta    Meta
	target  float64
	steps   []SweepStep
	reports []*Report
	tokens  int
}

// NewSweep starts an empty sweep of b.
func NewSweep(b config.Burst, meta Meta) *SweepBuilder {
	return &SweepBuilder{burst: b, meta: meta, target: config.SweepTargetRatio(b, meta.Scenarios)}
}

// Add records one step (bisect: auto ran it between a passing and a
// failing rate) and returns its verdict: passed when it ran to its end,
// measured requests, and the lower bound of its goodput ratio's 95 %
// interval reached the target; failed when the upper bound stayed below it
// or it stopped; else not enough evidence. A ratio on few requests is
// uncertain, so a step must measure enough of them to pass: 35 all good
// for a target of 0.9.
func (s *SweepBuilder) Add(run Run, bisect bool) decide.Verdict {
	rep := Build(s.burst, run, s.meta)
	s.tokens += rep.AllOutputTokens
	st := sweepStep(rep, run.Rate)
	st.Bisect = bisect
	st.Passed = decide.StepHeld(rep.Aborted, st.GoodputLower, s.target)
	st.Verdict = decide.StepVerdict(rep.Aborted, st.GoodputLower, st.GoodputUpper, s.target)
	s.steps = append(s.steps, st)
	s.reports = append(s.reports, rep)
	return st.Verdict
}

// sweepStep keeps rep's figures for the curve.
func sweepStep(rep *Report, rate float64) SweepStep {
	st := SweepStep{Rate: rate, AchievedRate: rep.AchievedRate, GoodputRatio: rep.Goodput.Ratio, TTFTP99: rep.Latency["ttft"].Measured("p99"),
		ErrorBoundP99: rep.ErrorBound.P99, ErrorBoundMax: rep.ErrorBound.Max, ClientSaturated: rep.ClientSaturated,
		Requests: rep.Requests, Planned: rep.PlannedRequests, Outcomes: rep.Outcomes, Aborted: rep.Aborted,
		Latency: map[string]stats.Summary{}, Throughput: rep.Throughput}
	for _, m := range curveMetrics {
		st.Latency[m] = rep.Latency[m]
	}
	for o, n := range rep.Outcomes {
		if o != prober.OutcomeCancelled {
			st.Judged += n
		}
	}
	if r := rep.Goodput.Ratio; r != nil {
		st.Good = int(math.Round(*r * float64(st.Judged)))
	}
	eff := st.Judged
	if e := rep.Goodput.Effective; e > 0 && e < eff {
		eff, st.Effective = e, e
	}
	if lo, hi, ok := stats.WilsonAt(st.Good, st.Judged, eff); ok {
		st.GoodputLower, st.GoodputUpper = &lo, &hi
	}
	return st
}

// Report is the highest passing step's report, carrying every step, the
// knee and the rate it held as max_rate_under_slo; with no step passing,
// the first step's. Its error bound is the worst of every step's, and its
// client was saturated if any step's was: the knee rests on every step.
// verdict.Judge gives its verdict.
func (s *SweepBuilder) Report() *Report {
	passing, failing := decide.Knee(s.held())
	best := -1
	for i, st := range s.steps {
		if passing != nil && st.Passed && st.Rate == *passing && best < 0 {
			best = i
		}
	}
	var rep *Report
	switch {
	case best >= 0:
		rep = s.reports[best]
		rate := s.steps[best].Rate
		rep.MaxRateUnderSLO = &rate
	case len(s.reports) > 0:
		rep = s.reports[0]
	default:
		rep = Build(s.burst, Run{Start: time.Now(), Aborted: true, AbortReason: "cancelled before the first step"}, s.meta)
	}
	rep.Sweep = s.steps
	rep.AllOutputTokens = s.tokens
	if len(s.reports) > 0 {
		var worst *stats.ErrorBound
		for _, step := range s.reports {
			worst = stats.WorseBound(worst, step.ErrorBound)
			rep.ClientSaturated = rep.ClientSaturated || step.ClientSaturated
		}
		rep.ErrorBound = worst
	}
	rep.Knee = s.knee(rep.MaxRateUnderSLO, failing)
	SizeSweep(s.burst, rep)
	return rep
}

// knee is the sweep's knee: the rate that held and the lowest failing one
// above it (decide.Knee), with the SLO it was judged on.
func (s *SweepBuilder) knee(passing, failing *float64) *Knee {
	k := &Knee{TargetRatio: s.target, Passing: passing, Failing: failing, Objectives: objectives(s.meta.Scenarios)}
	if a := s.burst.Sweep; a != nil && a.Auto != nil {
		k.Resolution = a.Auto.Resolution
	}
	return k
}

// held is the steps as their knee sees them.
func (s *SweepBuilder) held() []decide.Step {
	out := make([]decide.Step, len(s.steps))
	for i, st := range s.steps {
		out[i] = decide.Step{Rate: st.Rate, Verdict: decide.StepRead(st.Verdict, st.Passed)}
	}
	return out
}

// SizeSweep fills the knee's capacity and cost from b's capacity: and cost:,
// and prices each step; the GPUs of an instance are the configured ones,
// else the node's where NVML counted them. It runs again once the run's
// GPU facts are in.
func SizeSweep(b config.Burst, rep *Report) {
	k := rep.Knee
	if k == nil || (b.Capacity == nil && b.Cost == nil) {
		return
	}
	gpus := 0
	if rep.GPU != nil {
		gpus = rep.GPU.Count
	}
	if b.Capacity != nil && b.Capacity.GPUsPerInstance > 0 {
		gpus = b.Capacity.GPUsPerInstance
	}
	var at, above *SweepStep
	for i := range rep.Sweep {
		st := &rep.Sweep[i]
		if k.Passing != nil && st.Rate == *k.Passing && st.Passed {
			at = st
		}
		if k.Failing != nil && st.Rate == *k.Failing && !st.Passed {
			above = st
		}
	}
	k.Capacity, k.Cost, k.Fleet, k.Why = nil, nil, nil, ""
	if at == nil {
		k.Why = "no step held the SLO: nothing to size or price"
	} else if b.Capacity != nil {
		failing := 0.0
		if above != nil {
			failing = above.served()
		}
		p := SizeFleet(*b.Capacity, at.served(), failing, k.Failing == nil, at.Throughput.OutputTokens, gpus)
		k.Capacity = &p
	}
	if b.Cost == nil {
		return
	}
	hourly, ok := b.Cost.Hourly(gpus)
	if !ok {
		k.Why = "cost: per_gpu_hour needs the GPUs of an instance: set capacity.gpus_per_instance"
		return
	}
	for i := range rep.Sweep {
		t := rep.Sweep[i].Throughput
		rep.Sweep[i].Cost = PriceAt(hourly, t.OutputTokens, t.TotalTokens)
	}
	if at != nil {
		k.Cost = at.Cost
		if k.Capacity != nil && at.Throughput.OutputTokens != nil && at.served() > 0 {
			k.Fleet = PriceFleet(*k.Capacity, hourly, *at.Throughput.OutputTokens/at.served())
		}
	}
}

// served is the rate the step's requests arrived at, where measured, else
// the rate it offered: what one instance held or did not.
func (st *SweepStep) served() float64 {
	if st.AchievedRate != nil && *st.AchievedRate > 0 {
		return *st.AchievedRate
	}
	return st.Rate
}

// objectives are the tightest latency objective of each curve metric
// among the scenarios, in seconds.
func objectives(scenarios []config.Scenario) map[string]float64 {
	out := map[string]float64{}
	for _, s := range scenarios {
		for _, o := range s.SLO.Objectives() {
			v := o.Threshold.Seconds()
			if cur, ok := out[o.Name]; (o.Name == config.ObjectiveTTFT || o.Name == config.ObjectiveTPOT || o.Name == config.ObjectiveE2E) && (!ok || v < cur) {
				out[o.Name] = v
			}
		}
	}
	return out
}
