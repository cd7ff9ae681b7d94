package config

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"time"
)

// Arrival processes of a burst.
const (
	ArrivalConstant = "constant"
	ArrivalPoisson  = "poisson"
	ArrivalGamma    = "gamma"
	ArrivalTrace    = "trace"
)

// MaxSpeedup bounds a trace's speedup: beyond it, a trace's millisecond
// timestamps would collapse to the dispatcher's resolution.
const MaxSpeedup = 1000

// Burst is a scheduled open-loop load test of one target.
type Burst struct {
	Name      string             `yaml:"name"`
	Target    string             `yaml:"target"`
	Scenarios []WeightedScenario `yaml:"scenarios"`
	Arrival   Arrival            `yaml:"arrival"`
	// Duration or Requests bounds the measured part; warmup comes before it.
	Duration       Duration        `yaml:"duration,omitempty"`
	Requests       int             `yaml:"requests,omitempty"`
	Warmup         Warmup          `yaml:"warmup,omitempty"`
	MaxConcurrency int             `yaml:"max_concurrency,omitempty"`
	Seed           uint64          `yaml:"seed,omitempty"`
	Schedule       BurstSchedule   `yaml:"schedule,omitempty"`
	Brake          Brake           `yaml:"brake,omitempty"`
	Sweep          *Sweep          `yaml:"sweep,omitempty"`
	MaxRegression  []MaxRegression `yaml:"max_regression,omitempty"`
	// SLORule is how the SLO gates judge a share: interval (its 95 %
	// interval against the target: pass, fail or not enough evidence) or
	// point (the share as counted: an error budget).
	SLORule string `yaml:"slo_rule,omitempty"`
	Keep    int    `yaml:"keep,omitempty"`
	// Repeat runs the burst this many times, one after another, for
	// run-level figures (0 and 1: once).
	Repeat int `yaml:"repeat,omitempty"`

	// Capacity and Cost size and price a fleet from a sweep's max rate.
	Capacity *Capacity `yaml:"capacity,omitempty"`
	Cost     *Cost     `yaml:"cost,omitempty"`
}

// WeightedScenario is one scenario of a burst's mix.
type WeightedScenario struct {
	Scenario string  `yaml:"scenario"`
	Weight   float64 `yaml:"weight,omitempty"`
}

// Arrival is the arrival process: constant, poisson, or gamma with burstiness
// (1 is Poisson; below 1 burstier, above 1 smoother), or trace, which
// replays File's arrival times divided by Speedup (1 when left out) and its
// lengths.
type Arrival struct {
	Process    string  `yaml:"process,omitempty"`
	Rate       float64 `yaml:"rate,omitempty"`
	Burstiness float64 `yaml:"burstiness,omitempty"`
	File       string  `yaml:"file,omitempty"`
	Format     string  `yaml:"format,omitempty"` // azure or mooncake; empty detects it
	Speedup    float64 `yaml:"speedup,omitempty"`
}

// Warmup requests are sent but left out of the results.
type Warmup struct {
	Duration Duration `yaml:"duration,omitempty"`
	Requests int      `yaml:"requests,omitempty"`
}

// BurstSchedule says when a burst runs on its own; a burst with none runs
// only by `llmprobe gate`.
type BurstSchedule struct {
	Every   Duration `yaml:"every,omitempty"`
	Jitter  Duration `yaml:"jitter,omitempty"`
	At      []string `yaml:"at,omitempty"` // times of day, HH:MM, UTC
	OnStart bool     `yaml:"on_start,omitempty"`
	// OnEngineChange runs the burst when its target's engine, engine
	// version or model changes, once the change has held for Settle.
	OnEngineChange *EngineChange `yaml:"on_engine_change,omitempty"`
}

// EngineChange is the upgrade trigger of a burst. Its run is compared with
// the burst's last report from the engine before the change; a p50 or p99
// of TTFT or TPOT regressed when it grew by more than MaxIncrease and the
// Mann-Whitney test says the change is real.
type EngineChange struct {
	Settle      Duration `yaml:"settle,omitempty"`
	MaxIncrease float64  `yaml:"max_increase,omitempty"`
}

// DefaultEngineChange's values apply to fields left out.
var DefaultEngineChange = EngineChange{Settle: Duration(2 * time.Minute), MaxIncrease: 0.1}

// UnmarshalYAML applies defaults.
func (e *EngineChange) UnmarshalYAML(unmarshal func(any) error) error {
	*e = DefaultEngineChange
	type plain EngineChange
	return unmarshal((*plain)(e))
}

// Brake aborts a burst that hurts the target: over the last Window, a ratio
// above its maximum stops the burst.
type Brake struct {
	Window          Duration `yaml:"window,omitempty"`
	MaxErrorRatio   float64  `yaml:"max_error_ratio,omitempty"`
	MaxRejectRatio  float64  `yaml:"max_reject_ratio,omitempty"`
	MaxSLOMissRatio float64  `yaml:"max_slo_miss_ratio,omitempty"`
	// MinSamples is how many requests the window must hold before a ratio
	// counts; 0 means half the arrivals the rate brings in a window, at least 5.
	MinSamples int `yaml:"min_samples,omitempty"`
}

// Sweep runs the burst at several rates: a list, or automatic steps until the
// goodput ratio falls under the SLO target.
type Sweep struct {
	Rates []float64  `yaml:"rates,omitempty"`
	Auto  *AutoSweep `yaml:"auto,omitempty"`
}

// AutoSweep raises the rate from Start by Step up to Max, then bisects
// between the last passing and the first failing rate until they are
// Resolution apart (default a quarter of Step).
type AutoSweep struct {
	Start      float64 `yaml:"start"`
	Step       float64 `yaml:"step"`
	Max        float64 `yaml:"max"`
	Resolution float64 `yaml:"resolution,omitempty"`
	// TargetRatio is the goodput ratio a step must reach (default: the lowest
	// slo target_ratio of the burst's scenarios).
	TargetRatio float64 `yaml:"target_ratio,omitempty"`
}

// MaxRegression is a gate against the burst's baseline: a latency
// percentile may grow by MaxIncrease (0.2 = +20 %), goodput (Metric
// "goodput", no quantile) may drop by MaxDrop (0.02 = 2 points). It fails
// when the change's 95 % interval lies beyond the limit, passes when it
// lies within, and has not enough evidence otherwise (decide.Regression).
// The interval's spread comes from repeat: on both sides, else the burst's
// stored runs, else Spread: the figure's run-to-run movement beyond its
// sampling error (a fraction of a latency, points of goodput; unset:
// decide.DefaultSpread).
type MaxRegression struct {
	Metric      string   `yaml:"metric"`
	Quantile    string   `yaml:"quantile,omitempty"`
	MaxIncrease float64  `yaml:"max_increase,omitempty"`
	MaxDrop     float64  `yaml:"max_drop,omitempty"`
	Spread      *float64 `yaml:"spread,omitempty"`
	// Significant is read for configurations written before the interval
	// rule, which now decides every gate; it changes nothing.
	Significant bool `yaml:"significant,omitempty"`
}

// Goodput is the metric of a max_regression gate on the share of good
// requests.
const Goodput = "goodput"

// Where neither side of a max_regression gate repeated and the burst's
// stored history is too short, the gate assumes its figure moves between
// two runs by this much beyond its own sampling error (what a second run
// of a real server does not share: batch mix, caches, clocks): 5 % of a
// latency, 1 point of goodput.
const (
	DefaultSpread        = 0.05
	DefaultGoodputSpread = 0.01
)

// SpreadOf is the run-to-run spread r assumes, and whether it is the
// default (its spread unset).
func (r MaxRegression) SpreadOf() (spread float64, isDefault bool) {
	switch {
	case r.Spread != nil:
		return *r.Spread, false
	case r.Metric == Goodput:
		return DefaultGoodputSpread, true
	}
	return DefaultSpread, true
}

// Threshold is r's limit as written: max_drop for goodput, else
// max_increase.
func (r MaxRegression) Threshold() float64 {
	if r.Metric == Goodput {
		return r.MaxDrop
	}
	return r.MaxIncrease
}

// Limit is r's limit on the scale its interval is judged on: the log of
// 1 + max_increase for a latency, max_drop for goodput.
func (r MaxRegression) Limit() float64 {
	if r.Metric == Goodput {
		return r.MaxDrop
	}
	return math.Log1p(r.MaxIncrease)
}

// How a burst's SLO gates judge a share (Burst.SLORule).
const (
	SLORuleInterval = "interval"
	SLORulePoint    = "point"
)

// Burst metrics that reports and regressions speak of.
var (
	// ttft_answer: the first answer token of requests that reasoned;
	// ttft_tool: the first tool-call delta of requests that called a
	// function (each n/a in a run without).
	BurstMetrics   = []string{"ttft", "itl", "tpot", "e2e", "dispatch_delay", "ttft_answer", "ttft_tool"}
	BurstQuantiles = []string{"p50", "p90", "p95", "p99", "p99.9"}
)

// DefaultBurst's values apply to fields left out.
var DefaultBurst = Burst{
	Arrival:        Arrival{Process: ArrivalPoisson, Burstiness: 1},
	MaxConcurrency: 256,
	Seed:           1,
	Keep:           20,
}

// UnmarshalYAML applies defaults.
func (b *Burst) UnmarshalYAML(unmarshal func(any) error) error {
	*b = DefaultBurst
	type plain Burst
	return unmarshal((*plain)(b))
}

// Burst returns the named burst.
func (c *Config) Burst(name string) (Burst, bool) {
	i := slices.IndexFunc(c.Bursts, func(b Burst) bool { return b.Name == name })
	if i < 0 {
		return Burst{}, false
	}
	return c.Bursts[i], true
}

// ScenariosOf returns the scenarios b mixes, in the order of b.Scenarios.
func (c *Config) ScenariosOf(b Burst) []Scenario {
	out := make([]Scenario, 0, len(b.Scenarios))
	for _, ws := range b.Scenarios {
		s, _ := c.Scenario(ws.Scenario)
		out = append(out, s)
	}
	return out
}

var timeOfDayRe = regexp.MustCompile(`^([01]\d|2[0-3]):([0-5]\d)$`)

func (b *Burst) validate(path string, cfg *Config, seen map[string]string, errs *FieldErrors) {
	errs.Name(path, b.Name, "burst", seen)
	if b.Target == "" {
		errs.Add(path+".target", "is required")
	} else if _, ok := cfg.Target(b.Target); !ok {
		errs.Unknown(path+".target", "target", b.Target, cfg.targetNames())
	}
	if len(b.Scenarios) == 0 {
		errs.Add(path+".scenarios", "at least one scenario is required")
	}
	for i := range b.Scenarios {
		ws := &b.Scenarios[i]
		p := fmt.Sprintf("%s.scenarios[%d]", path, i)
		if _, ok := cfg.Scenario(ws.Scenario); !ok {
			errs.Unknown(p+".scenario", "scenario", ws.Scenario, cfg.scenarioNames())
		}
		if ws.Weight == 0 {
			ws.Weight = 1
		}
		errs.Above(p+".weight", ws.Weight, 0, 1e6, "")
	}
	switch b.Arrival.Process {
	case ArrivalConstant, ArrivalPoisson:
	case ArrivalGamma:
		errs.Within(path+".arrival.burstiness", b.Arrival.Burstiness, minBurstiness, maxBurstiness, "(1 is Poisson, below 1 burstier)")
	case ArrivalTrace:
	default:
		errs.Add(path+".arrival.process", "%q must be constant, poisson, gamma or trace", b.Arrival.Process)
	}
	if b.Arrival.Process == ArrivalTrace {
		b.validateTrace(path, cfg, errs)
		if b.Arrival.Speedup == 0 {
			b.Arrival.Speedup = 1
		}
	} else if b.Arrival.File != "" || b.Arrival.Format != "" || b.Arrival.Speedup != 0 {
		errs.Add(path+".arrival", "file, format and speedup go with process: trace only")
	}
	if b.Sweep == nil && b.Arrival.Process != ArrivalTrace {
		errs.Within(path+".arrival.rate", b.Arrival.Rate, minRate, MaxRate, "requests per second")
	}
	if (b.Duration != 0) == (b.Requests != 0) {
		errs.Add(path, "set exactly one of duration and requests")
	}
	if b.Requests != 0 {
		errs.IntWithin(path+".requests", b.Requests, 1, MaxPlannedCeiling, "")
	}
	errs.DurationWithin(path+".duration", b.Duration, time.Second, 24*time.Hour, true)
	if b.Warmup.Duration != 0 && b.Warmup.Requests != 0 {
		errs.Add(path+".warmup", "set at most one of duration and requests")
	}
	errs.DurationWithin(path+".warmup.duration", b.Warmup.Duration, time.Second, time.Hour, true)
	errs.IntWithin(path+".warmup.requests", b.Warmup.Requests, 0, MaxPlannedCeiling, "")
	errs.IntWithin(path+".max_concurrency", b.MaxConcurrency, 1, maxConcurrency, "")
	errs.IntWithin(path+".keep", b.Keep, 1, 1000, "reports")
	b.Schedule.validate(path+".schedule", errs)
	b.Brake.validate(path+".brake", errs)
	if sw := b.Sweep; sw != nil {
		sw.validate(path+".sweep", errs)
	}
	b.validatePlanning(path, errs)
	for i, r := range b.MaxRegression {
		r.validate(fmt.Sprintf("%s.max_regression[%d]", path, i), errs)
	}
	switch b.SLORule {
	case "", SLORuleInterval, SLORulePoint:
	default:
		errs.Add(path+".slo_rule", "%q must be interval or point", b.SLORule)
	}
	b.validateRepeat(path, errs)
}

func (s *BurstSchedule) validate(path string, errs *FieldErrors) {
	errs.DurationWithin(path+".every", s.Every, time.Second, 30*24*time.Hour, true)
	if s.Jitter < 0 || (s.Every > 0 && s.Jitter >= s.Every) {
		errs.Add(path+".jitter", "%s must be at least 0s and less than every", s.Jitter)
	}
	if s.Every > 0 && len(s.At) > 0 {
		errs.Add(path, "set every or at, not both")
	}
	for i, at := range s.At {
		if !timeOfDayRe.MatchString(at) {
			errs.Add(fmt.Sprintf("%s.at[%d]", path, i), "%q must be a UTC time of day like 02:30", at)
		}
	}
	if ec := s.OnEngineChange; ec != nil {
		errs.DurationWithin(path+".on_engine_change.settle", ec.Settle, time.Second, 24*time.Hour, false)
		errs.Above(path+".on_engine_change.max_increase", ec.MaxIncrease, 0, 100, "(0.1 means +10%)")
	}
}

func (br *Brake) validate(path string, errs *FieldErrors) {
	for _, r := range []struct {
		name string
		v    float64
	}{{"max_error_ratio", br.MaxErrorRatio}, {"max_reject_ratio", br.MaxRejectRatio}, {"max_slo_miss_ratio", br.MaxSLOMissRatio}} {
		errs.Within(path+"."+r.name, r.v, 0, 1, "")
	}
	if (br.MaxErrorRatio > 0 || br.MaxRejectRatio > 0 || br.MaxSLOMissRatio > 0) && br.Window == 0 {
		errs.Add(path+".window", "is required when a brake ratio is set")
	}
	errs.DurationWithin(path+".window", br.Window, time.Second, time.Hour, true)
	errs.IntWithin(path+".min_samples", br.MinSamples, 0, 1_000_000, "(0 sizes it to the rate)")
}

func (sw *Sweep) validate(path string, errs *FieldErrors) {
	if (len(sw.Rates) > 0) == (sw.Auto != nil) {
		errs.Add(path, "set exactly one of rates and auto")
	}
	if len(sw.Rates) > MaxSweepSteps {
		errs.Add(path+".rates", "%d rates must be at most %d", len(sw.Rates), MaxSweepSteps)
	}
	for i, r := range sw.Rates {
		errs.Within(fmt.Sprintf("%s.rates[%d]", path, i), r, minRate, MaxRate, "requests per second")
	}
	a := sw.Auto
	if a == nil {
		return
	}
	ok := errs.Within(path+".auto.start", a.Start, minRate, MaxRate, "requests per second")
	ok = errs.Within(path+".auto.max", a.Max, minRate, MaxRate, "requests per second") && ok
	ok = errs.Within(path+".auto.step", a.Step, minRate, MaxRate, "requests per second") && ok
	if ok && a.Max < a.Start {
		errs.Add(path+".auto.max", "%g must be at least start (%g)", a.Max, a.Start)
	} else if ok && (a.Max-a.Start)/a.Step >= MaxSweepSteps {
		errs.Add(path+".auto.step", "%g makes %.0f steps from %g to %g; at most %d are allowed", a.Step, math.Floor((a.Max-a.Start)/a.Step)+1, a.Start, a.Max, MaxSweepSteps)
	}
	if ok && a.Resolution == 0 {
		a.Resolution = a.Step / 4
	} else if ok {
		errs.Within(path+".auto.resolution", a.Resolution, max(minRate, a.Step/1024), a.Step, "requests per second (at most step; step/4 when left out)")
	}
	if !(a.TargetRatio >= 0 && a.TargetRatio < 1) {
		errs.Add(path+".auto.target_ratio", "%g must be within [0, 1)", a.TargetRatio)
	}
}

// validatePlanning checks capacity: and cost:, which size and price from
// a sweep's max rate and so need a sweep.
func (b *Burst) validatePlanning(path string, errs *FieldErrors) {
	if b.Capacity != nil {
		b.Capacity.Validate(path+".capacity", errs)
	}
	if b.Cost != nil {
		b.Cost.Validate(path+".cost", errs)
	}
	if b.Sweep == nil && b.Capacity != nil {
		errs.Add(path+".capacity", "sizes from a sweep's max rate: set sweep too")
	}
	if b.Sweep == nil && b.Cost != nil {
		errs.Add(path+".cost", "prices a sweep's steps: set sweep too")
	}
}

func (r MaxRegression) validate(path string, errs *FieldErrors) {
	if r.Metric == Goodput {
		if r.Quantile != "" {
			errs.Add(path+".quantile", "goodput has no quantile: leave it out")
		}
		if r.MaxIncrease != 0 {
			errs.Add(path+".max_increase", "goodput's limit is max_drop, in points (0.02 means 2 points)")
		}
		errs.Above(path+".max_drop", r.MaxDrop, 0, 1, "(0.02 means a drop of 2 points)")
		if r.Spread != nil {
			errs.Within(path+".spread", *r.Spread, 0, 1, "(0.01 means 1 point between runs)")
		}
		return
	}
	if !slices.Contains(BurstMetrics, r.Metric) {
		errs.Add(path+".metric", "%q must be one of %v or %s", r.Metric, BurstMetrics, Goodput)
	}
	if !slices.Contains(BurstQuantiles, r.Quantile) {
		errs.Add(path+".quantile", "%q must be one of %v", r.Quantile, BurstQuantiles)
	}
	if r.MaxDrop != 0 {
		errs.Add(path+".max_drop", "is goodput's limit: a latency's is max_increase")
	}
	errs.Above(path+".max_increase", r.MaxIncrease, 0, 100, "(0.2 means +20%)")
	if r.Spread != nil {
		errs.Within(path+".spread", *r.Spread, 0, 1, "(0.05 means 5% between runs)")
	}
}

// SweepTargetRatio is the goodput ratio a step of b's sweep must reach:
// auto's target_ratio, else the strictest target_ratio among scenarios
// (b's) that set objectives; 0 when none does.
func SweepTargetRatio(b Burst, scenarios []Scenario) float64 {
	if b.Sweep != nil && b.Sweep.Auto != nil && b.Sweep.Auto.TargetRatio > 0 {
		return b.Sweep.Auto.TargetRatio
	}
	t := 0.0
	for _, s := range scenarios {
		if len(s.SLO.Objectives()) > 0 {
			t = max(t, s.SLO.TargetRatio)
		}
	}
	return t
}
