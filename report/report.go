// Package report builds, judges and stores burst reports: exact summaries,
// gates, the regression against the previous run, and the one verdict.
package report

import (
	"fmt"
	"math"
	"sort"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
)

// Report is the saved result of one burst (or sweep). It carries everything
// needed to read it later: the burst's configuration, seed, target facts and
// the samples the next report's regression test needs.
type Report struct {
	ID            string `json:"id"`
	Burst         string `json:"burst"`
	Target        string `json:"target"`
	Model         string `json:"model"`
	Engine        string `json:"engine"`
	EngineVersion string `json:"engine_version"`
	// Config and Scenarios are the burst's configuration as written in YAML.
	Config          map[string]any   `json:"config"`
	Scenarios       []map[string]any `json:"scenarios"`
	Seed            uint64           `json:"seed"`
	Rate            float64          `json:"rate"`
	Start           time.Time        `json:"start"`
	End             time.Time        `json:"end"`
	DurationSeconds float64          `json:"duration_seconds"`
	WarmupRequests  int              `json:"warmup_requests"`
	LLMProbeVersion string           `json:"llmprobe_version"`
	Host            string           `json:"host"`
	GPU             *GPUFacts        `json:"gpu,omitempty"`

	PlannedRequests int                        `json:"planned_requests"`
	AllOutputTokens int                        `json:"all_output_tokens"`
	Requests        int                        `json:"requests"`
	Outcomes        map[prober.Outcome]int     `json:"outcomes"`
	TokenSources    map[prober.TokenSource]int `json:"token_sources"`
	Latency         map[string]Summary         `json:"latency"`
	AchievedRate    float64                    `json:"achieved_rate"`
	Throughput      Throughput                 `json:"throughput"`
	Goodput         Goodput                    `json:"goodput"`
	Gates           []Gate                     `json:"gates"`
	Passed          bool                       `json:"passed"`
	Aborted         bool                       `json:"aborted"`
	AbortReason     string                     `json:"abort_reason,omitempty"`
	ClientSaturated bool                       `json:"client_saturated"`
	Regression      *Regression                `json:"regression,omitempty"`
	Sweep           []SweepStep                `json:"sweep,omitempty"`
	MaxRateUnderSLO *float64                   `json:"max_rate_under_slo,omitempty"`

	// TTFTSeries is (seconds since start, TTFT seconds) per measured success, for the chart.
	TTFTSeries [][2]float64 `json:"ttft_series"`
	// Samples keeps TTFT and TPOT samples for the next report's significance test.
	Samples map[string][]float64 `json:"samples"`

	// maxRegression is the burst's max_regression, for Judge.
	maxRegression []config.MaxRegression
}

// GPUFacts describes the node's GPUs during the burst (filled where NVML works).
type GPUFacts struct {
	Count                 int      `json:"count"`
	Names                 []string `json:"names"`
	DriverVersion         string   `json:"driver_version"`
	CUDAVersion           string   `json:"cuda_version"`
	EnergyJoules          *float64 `json:"energy_joules,omitempty"`
	JoulesPerOutputToken  *float64 `json:"joules_per_output_token,omitempty"`
	MeanPowerWatts        *float64 `json:"mean_power_watts,omitempty"`
	MaxTemperatureCelsius *float64 `json:"max_temperature_celsius,omitempty"`
}

// Throughput of the measured part, per second.
type Throughput struct {
	Requests     float64 `json:"requests_per_second"`
	PromptTokens float64 `json:"prompt_tokens_per_second"`
	OutputTokens float64 `json:"output_tokens_per_second"`
	TotalTokens  float64 `json:"total_tokens_per_second"`
}

// Goodput counts good requests: succeeded and met every objective.
type Goodput struct {
	Requests     float64            `json:"requests_per_second"`
	OutputTokens float64            `json:"output_tokens_per_second"`
	Ratio        float64            `json:"ratio"`
	PerObjective map[string]float64 `json:"per_objective"`
}

// Gate is one pass/fail verdict with its threshold.
type Gate struct {
	Name      string  `json:"name"`
	Threshold float64 `json:"threshold"`
	Value     float64 `json:"value"`
	Passed    bool    `json:"passed"`
	Detail    string  `json:"detail"`
}

// Regression compares a report with the previous one of the same burst.
type Regression struct {
	PreviousID            string             `json:"previous_id"`
	PreviousEngineVersion string             `json:"previous_engine_version"`
	EngineVersionChanged  bool               `json:"engine_version_changed"`
	Metrics               []RegressionMetric `json:"metrics"`
}

// RegressionMetric is one metric's change; PValue is set for sampled metrics.
type RegressionMetric struct {
	Metric      string   `json:"metric"`
	Quantile    string   `json:"quantile"`
	Previous    float64  `json:"previous"`
	Current     float64  `json:"current"`
	Ratio       float64  `json:"ratio"`
	PValue      *float64 `json:"p_value,omitempty"`
	Significant bool     `json:"significant"`
}

// SweepStep is one rate of a sweep.
type SweepStep struct {
	Rate         float64 `json:"rate"`
	AchievedRate float64 `json:"achieved_rate"`
	GoodputRatio float64 `json:"goodput_ratio"`
	TTFTP99      float64 `json:"ttft_p99"`
	Passed       bool    `json:"passed"`
}

// Run is what one run of a burst at one rate measured. Results hold the
// measured requests only, in arrival order; warmup requests were sent and
// left out.
type Run struct {
	Rate       float64
	Start, End time.Time // the measured part: first measured arrival to last finish
	Planned    int       // measured requests planned
	Warmup     int
	// AllOutputTokens counts every successful request's tokens, warmup
	// included: the denominator of energy per token over the whole run.
	AllOutputTokens int
	Results         []*prober.Result
	Aborted         bool
	AbortReason     string
}

// Meta is what the runner knows besides the results.
type Meta struct {
	Model, Engine, EngineVersion, Version, Host string
	Scenarios                                   []config.Scenario
}

// Limits on what a report keeps, so its size is bounded whatever the burst.
const (
	maxSeriesPoints = 2000
	maxSamples      = 5000
	// clientSaturatedDispatchP99 is the dispatch delay p99 above which a burst
	// describes the prober, not the server.
	clientSaturatedDispatchP99 = 5 * time.Millisecond
	// significanceLevel is the p-value under which a change counts as real.
	significanceLevel = 0.05
)

// Build turns a run into a report; Judge then gives its verdict.
func Build(b config.Burst, o Run, meta Meta) *Report {
	r := &Report{
		ID:    ID(b.Name, o.Start),
		Burst: b.Name, Target: b.Target, Model: meta.Model, Engine: meta.Engine, EngineVersion: meta.EngineVersion,
		Config: asYAMLMap(b), Seed: b.Seed, Rate: o.Rate,
		Start: o.Start.UTC(), End: o.End.UTC(), WarmupRequests: o.Warmup,
		LLMProbeVersion: meta.Version, Host: meta.Host,
		PlannedRequests: o.Planned, Requests: len(o.Results), AllOutputTokens: o.AllOutputTokens,
		Outcomes: map[prober.Outcome]int{}, TokenSources: map[prober.TokenSource]int{},
		Latency: map[string]Summary{}, Aborted: o.Aborted, AbortReason: o.AbortReason,
		Samples: map[string][]float64{}, maxRegression: b.MaxRegression,
	}
	for _, sc := range meta.Scenarios {
		r.Scenarios = append(r.Scenarios, asYAMLMap(sc))
	}
	dur := o.End.Sub(o.Start).Seconds()
	r.DurationSeconds = dur
	samples := map[string][]float64{}
	met := map[string]int{}
	checked := map[string]int{}
	var prompt, output, goodOut, good int
	var lastSched time.Time
	for _, res := range o.Results {
		r.Outcomes[res.Outcome]++
		samples["dispatch_delay"] = append(samples["dispatch_delay"], res.DispatchDelay.Seconds())
		if res.Sched.After(lastSched) {
			lastSched = res.Sched
		}
		for _, c := range res.Checks {
			checked[c.Objective]++
			if c.Met {
				met[c.Objective]++
			}
		}
		if res.Outcome != prober.OutcomeSuccess {
			continue
		}
		r.TokenSources[res.TokenSource]++
		if res.FirstTokenSeen() {
			samples["ttft"] = append(samples["ttft"], res.TTFT.Seconds())
			if len(r.TTFTSeries) < maxSeriesPoints {
				r.TTFTSeries = append(r.TTFTSeries, [2]float64{round6(res.Sched.Sub(o.Start).Seconds()), round6(res.TTFT.Seconds())})
			}
		}
		if res.OutputTokens > 1 && res.FirstTokenSeen() {
			samples["tpot"] = append(samples["tpot"], res.TPOT.Seconds())
		}
		for _, d := range res.ITL {
			samples["itl"] = append(samples["itl"], d.Seconds())
		}
		samples["e2e"] = append(samples["e2e"], res.E2E.Seconds())
		p := res.PromptTokensReported
		if p == 0 {
			p = res.PromptTokensRequested
		}
		prompt += p
		output += res.OutputTokens
		if res.Good {
			good++
			goodOut += res.OutputTokens
		}
	}
	for _, m := range []string{"ttft", "tpot"} {
		r.Samples[m] = thin(samples[m], maxSamples)
	}
	for _, m := range config.BurstMetrics {
		r.Latency[m] = Summarize(samples[m])
	}
	if dur > 0 {
		succ := float64(r.Outcomes[prober.OutcomeSuccess])
		r.Throughput = Throughput{Requests: succ / dur, PromptTokens: float64(prompt) / dur, OutputTokens: float64(output) / dur, TotalTokens: float64(prompt+output) / dur}
		r.Goodput.Requests = float64(good) / dur
		r.Goodput.OutputTokens = float64(goodOut) / dur
	}
	if span := lastSched.Sub(o.Start).Seconds(); span > 0 && len(o.Results) > 1 {
		r.AchievedRate = float64(len(o.Results)-1) / span
	}
	if len(o.Results) > 0 {
		r.Goodput.Ratio = float64(good) / float64(len(o.Results))
	}
	r.Goodput.PerObjective = map[string]float64{}
	for obj, n := range checked {
		r.Goodput.PerObjective[obj] = float64(met[obj]) / float64(n)
	}
	r.ClientSaturated = r.Latency["dispatch_delay"].P99 > clientSaturatedDispatchP99.Seconds()
	r.gates(meta.Scenarios)
	return r
}

// Judge compares the report with prev, the last report of the same burst
// (nil if there is none), adds the max_regression gates, and gives the
// verdict. It is the one place that decides whether a burst passed: it ran
// to its end, measured at least one request, passed every gate, and, if it
// swept rates, held the SLO at one of them. Call it once per report.
func (r *Report) Judge(prev *Report) {
	if prev != nil {
		r.regress(prev)
	}
	r.Passed = !r.Aborted && r.Requests > 0 && (r.Sweep == nil || r.MaxRateUnderSLO != nil)
	for _, g := range r.Gates {
		r.Passed = r.Passed && g.Passed
	}
}

// gates: per objective, the share of requests meeting it against the
// strictest target ratio among the burst's scenarios that set it.
func (r *Report) gates(scenarios []config.Scenario) {
	target := map[string]float64{}
	lo, hi := map[string]time.Duration{}, map[string]time.Duration{}
	for _, s := range scenarios {
		for _, o := range s.SLO.Objectives() {
			if s.SLO.TargetRatio > target[o.Name] {
				target[o.Name] = s.SLO.TargetRatio
			}
			if l, ok := lo[o.Name]; !ok || o.Threshold < l {
				lo[o.Name] = o.Threshold
			}
			hi[o.Name] = max(hi[o.Name], o.Threshold)
		}
	}
	names := make([]string, 0, len(target))
	for n := range target {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		v := r.Goodput.PerObjective[n]
		limit := lo[n].String()
		if hi[n] != lo[n] {
			// Each request is held to its own scenario's threshold.
			limit = fmt.Sprintf("its scenario's threshold (%s to %s)", lo[n], hi[n])
		}
		r.Gates = append(r.Gates, Gate{
			Name: "slo_" + n, Threshold: target[n], Value: v, Passed: v >= target[n],
			Detail: fmt.Sprintf("%.2f%% of requests met %s <= %s; the target is %.2f%%", 100*v, n, limit, 100*target[n]),
		})
	}
}

// regress compares p50 and p99 with the previous report, tests TTFT and TPOT
// samples for a significant change, and applies max_regression gates.
func (r *Report) regress(prev *Report) {
	reg := &Regression{PreviousID: prev.ID, PreviousEngineVersion: prev.EngineVersion,
		EngineVersionChanged: prev.EngineVersion != "" && r.EngineVersion != "" && prev.EngineVersion != r.EngineVersion}
	pvalues := map[string]float64{}
	for _, m := range []string{"ttft", "tpot"} {
		if len(r.Samples[m]) > 1 && len(prev.Samples[m]) > 1 {
			pvalues[m] = mannWhitney(r.Samples[m], prev.Samples[m])
		}
	}
	for _, m := range config.BurstMetrics {
		for _, q := range []string{"p50", "p99"} {
			cur, old := r.Latency[m].Quantile(q), prev.Latency[m].Quantile(q)
			rm := RegressionMetric{Metric: m, Quantile: q, Previous: old, Current: cur, Ratio: ratio(cur, old)}
			if p, ok := pvalues[m]; ok {
				rm.PValue = &p
				rm.Significant = p < significanceLevel
			}
			reg.Metrics = append(reg.Metrics, rm)
		}
	}
	r.Regression = reg
	for _, mr := range r.maxRegression {
		cur, old := r.Latency[mr.Metric].Quantile(mr.Quantile), prev.Latency[mr.Metric].Quantile(mr.Quantile)
		increase := ratio(cur, old) - 1
		significant := true
		if mr.Significant {
			p, ok := pvalues[mr.Metric]
			significant = ok && p < significanceLevel
		}
		passed := !(increase > mr.MaxIncrease && significant)
		detail := fmt.Sprintf("%s %s %.4gs vs %.4gs in %s (%+.1f%%, limit +%.1f%%)", mr.Metric, mr.Quantile, cur, old, prev.ID, 100*increase, 100*mr.MaxIncrease)
		if reg.EngineVersionChanged {
			detail += fmt.Sprintf("; engine %s -> %s", prev.EngineVersion, r.EngineVersion)
		}
		r.Gates = append(r.Gates, Gate{Name: fmt.Sprintf("regression_%s_%s", mr.Metric, mr.Quantile), Threshold: mr.MaxIncrease, Value: increase, Passed: passed, Detail: detail})
	}
}

func ratio(cur, old float64) float64 {
	if old <= 0 {
		return 1
	}
	return cur / old
}

// thin keeps at most n evenly spaced samples, deterministically.
func thin(xs []float64, n int) []float64 {
	if len(xs) <= n {
		return xs
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = xs[i*len(xs)/n]
	}
	return out
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// asYAMLMap renders a configuration value with its YAML field names (and
// secrets redacted), for embedding in a JSON report.
func asYAMLMap(v any) map[string]any {
	out := map[string]any{}
	b, err := yaml.Marshal(v)
	if err == nil {
		_ = yaml.Unmarshal(b, &out)
	}
	return out
}
