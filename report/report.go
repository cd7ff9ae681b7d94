// Package report is the burst report: its model; Build, which makes one
// from a run's measured requests (exact summaries, failures with their
// reasons, where TTFT went, the client's error bound, the SLO gates); and
// what else makes or judges one: a sweep's steps and knee with the fleet
// they size, a repeated burst's runs, shards merged, the verdict against a
// baseline.
package report

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/llmprobe/llmprobe/decide"

	"go.yaml.in/yaml/v3"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/shard"
	"github.com/llmprobe/llmprobe/stats"
)

// Report is the saved result of one burst (or sweep). It carries everything
// needed to read it later: the burst's configuration, seed, target facts and
// the samples the next report's regression test needs. A figure with no
// samples is null (n/a), never 0.
type Report struct {
	ID            string `json:"id"`
	Burst         string `json:"burst"`
	Target        string `json:"target"`
	Model         string `json:"model"`
	Engine        string `json:"engine"`
	EngineVersion string `json:"engine_version"`
	// Overrides are the `llmprobe gate` flags that changed the configured
	// burst or its target for this run (--rate=5); Config shows the result.
	Overrides []string `json:"overrides,omitempty"`
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

	// PlannedRequests is the measured part's plan: every one of them is in
	// Outcomes (sent) or in NotSent.
	PlannedRequests int                    `json:"planned_requests"`
	AllOutputTokens int                    `json:"all_output_tokens"`
	Requests        int                    `json:"requests"`
	Outcomes        map[prober.Outcome]int `json:"outcomes"`
	NotSent         []NotSent              `json:"not_sent,omitempty"`
	// Retries counts requests sent once more on a new connection, by why
	// (transport.RetryReasons): the reused one closed before any byte.
	Retries       map[string]int             `json:"retries,omitempty"`
	Failures      []FailureGroup             `json:"failures,omitempty"`
	FailedSamples []FailedRequest            `json:"failed_samples,omitempty"`
	TokenSources  map[prober.TokenSource]int `json:"token_sources"`
	// TokenMismatches counts requests whose usage contradicted the stream,
	// by kind (prober.TokenMismatches): below its deltas (counted from them
	// instead), above max_tokens (failed).
	TokenMismatches map[string]int `json:"token_mismatches,omitempty"`
	// QualityFailed is why the first answers that failed their checks
	// failed (at most maxQualityFailed), so a failed slo_quality says why.
	QualityFailed []string                 `json:"quality_failed,omitempty"`
	Latency       map[string]stats.Summary `json:"latency"`
	// WithoutOwnDelay is each latency's percentiles with every request's
	// own-delay bound taken off: the fastest the target could have been. A
	// regression gate decides only what this cannot turn; absent where
	// llmprobe added no delay, and in reports written before it.
	WithoutOwnDelay map[string]map[string]float64 `json:"latency_without_own_delay,omitempty"`
	// TTFTBreakdown is where the successful requests' TTFT went; null when
	// none was split (and in reports older than the split).
	TTFTBreakdown *TTFTBreakdown `json:"ttft_breakdown,omitempty"`
	// Turns is TTFT by turn of the conversation scenarios; absent without one.
	Turns []TurnSummary `json:"turns,omitempty"`
	// Replicas is the run by the replica that answered each request, where
	// the target names its replicas' header.
	Replicas []ReplicaSummary `json:"replicas,omitempty"`
	// PromptCache is what the engine's prefix cache served, where its usage
	// says; absent where it never did.
	PromptCache  *PromptCache `json:"prompt_cache,omitempty"`
	AchievedRate *float64     `json:"achieved_rate"`
	Throughput   Throughput   `json:"throughput"`
	// Transcription is the audio figures of a transcriptions run; absent
	// for other APIs.
	Transcription *Transcription `json:"transcription,omitempty"`
	Goodput       Goodput        `json:"goodput"`
	Gates         []decide.Gate  `json:"gates"`
	Passed        bool           `json:"passed"`
	// Verdict is Passed in one word with its caveat: passed, failed, or
	// inconclusive (a saturated client failed it); VerdictReason says why.
	Verdict       decide.Verdict `json:"verdict,omitempty"`
	VerdictReason string         `json:"verdict_reason,omitempty"`
	Aborted       bool           `json:"aborted"`
	AbortReason   string         `json:"abort_reason,omitempty"`
	// ClientSaturated is set when the client's own error (ErrorBound) passed
	// a tenth of the tightest objective: the numbers describe the prober.
	ClientSaturated bool `json:"client_saturated"`
	// ErrorBound is null in reports written before llmprobe measured it.
	ErrorBound *stats.ErrorBound `json:"error_bound,omitempty"`
	Regression *Regression       `json:"regression,omitempty"`
	// Trace is what a trace replay changed or left out; nil for other processes.
	Trace *TraceReplay `json:"trace,omitempty"`
	// RegressionSkipped says why there is no regression verdict.
	RegressionSkipped string      `json:"regression_skipped,omitempty"`
	Sweep             []SweepStep `json:"sweep,omitempty"`
	MaxRateUnderSLO   *float64    `json:"max_rate_under_slo,omitempty"`
	// Knee is where a sweep stopped holding the SLO, and the capacity and
	// cost it implies; null for a burst that did not sweep.
	Knee *Knee `json:"knee,omitempty"`
	// EngineMetrics is the engine's own view of the run, from its /metrics
	// read before and after; null where the target names no engine_metrics
	// and in reports written before llmprobe read them.
	EngineMetrics *EngineMetrics `json:"engine_metrics,omitempty"`

	// Upgrade is set on a run an engine change started (schedule
	// on_engine_change): the change and its verdict.
	Upgrade *Upgrade `json:"upgrade,omitempty"`
	// Repeat holds the run-level figures of a burst run N times.
	Repeat *Repeat `json:"repeat,omitempty"`
	// BaselineNote is what the output says first about the baseline: a
	// skip, a refusal, or another target or URL it measured.
	BaselineNote string `json:"baseline_note,omitempty"`

	// TTFTSeries is (seconds since start, TTFT seconds) per measured success, for the chart.
	TTFTSeries [][2]float64 `json:"ttft_series"`
	// Samples keeps TTFT and TPOT samples for the next report's significance test.
	Samples map[string][]float64 `json:"samples"`

	// Shard marks one replica's share of a split burst, with what merging
	// needs; Merged marks the report `llmprobe report merge` made of them.
	Shard  *ShardPart `json:"shard,omitempty"`
	Merged *Merged    `json:"merged,omitempty"`

	// engineScrapes are the run's engine pages, for AttachEngineMetrics.
	engineScrapes *EngineScrapes
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

// Throughput of the measured part, per second; null when it lasted no time.
type Throughput struct {
	Requests *float64 `json:"requests_per_second"`
	// Inputs is the texts embedded or documents ranked per second by
	// successful embeddings and rerank requests; absent for other APIs.
	Inputs       *float64 `json:"inputs_per_second,omitempty"`
	PromptTokens *float64 `json:"prompt_tokens_per_second"`
	OutputTokens *float64 `json:"output_tokens_per_second"`
	TotalTokens  *float64 `json:"total_tokens_per_second"`
}

// Goodput counts good requests: succeeded and met every objective.
type Goodput struct {
	Requests     *float64           `json:"requests_per_second"`
	OutputTokens *float64           `json:"output_tokens_per_second"`
	Ratio        *float64           `json:"ratio"`
	PerObjective map[string]float64 `json:"per_objective"`
	// The 95 % Wilson intervals of Ratio (over Judged requests) and of
	// each objective's share; absent in older reports.
	Judged               int                       `json:"judged,omitempty"`
	RatioInterval        *stats.Interval           `json:"ratio_interval,omitempty"`
	PerObjectiveInterval map[string]stats.Interval `json:"per_objective_interval,omitempty"`
	// PerObjectiveChecked is how many requests each share rests on (for
	// quality, the successful requests whose answer was checked).
	PerObjectiveChecked map[string]int `json:"per_objective_checked,omitempty"`
	// PerObjectiveOwnDelay counts, per objective, the misses llmprobe's own
	// delay may explain: missed as measured, met without it.
	PerObjectiveOwnDelay map[string]decide.OwnDelayMisses `json:"per_objective_own_delay,omitempty"`
	// Effective and PerObjectiveEffective are what Judged and each share's
	// requests are worth as independent draws by batch means
	// (stats.EffectiveN), where fewer: requests of one run queue together.
	// The intervals are over them; absent, every request counts.
	Effective             int            `json:"effective_n,omitempty"`
	PerObjectiveEffective map[string]int `json:"per_objective_effective_n,omitempty"`
}

// Regression compares a report with its baseline: the previous report of the
// same burst, or one chosen with `llmprobe gate --baseline`.
type Regression struct {
	PreviousID            string             `json:"previous_id"`
	PreviousEngineVersion string             `json:"previous_engine_version"`
	EngineVersionChanged  bool               `json:"engine_version_changed"`
	Metrics               []RegressionMetric `json:"metrics"`
}

// RegressionMetric is one metric's change; a side without samples is null,
// and so is the ratio. PValue is set for sampled metrics.
type RegressionMetric struct {
	Metric      string   `json:"metric"`
	Quantile    string   `json:"quantile"`
	Previous    *float64 `json:"previous"`
	Current     *float64 `json:"current"`
	Ratio       *float64 `json:"ratio"`
	PValue      *float64 `json:"p_value,omitempty"`
	Significant bool     `json:"significant"`
	// TooFew: a side's quantile rests on fewer samples than it needs.
	TooFew bool `json:"too_few,omitempty"`
}

// NotSent counts planned requests that were never sent, by why.
type NotSent struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

// Run is what one run of a burst at one rate measured. Results hold the
// measured requests that were sent, in arrival order (warmup requests were
// sent and left out); NotSent counts the measured ones that were not, by
// reason.
type Run struct {
	ID   string // the report's id; empty means ID(burst, Start)
	Rate float64
	// Start and End bound the measured part: its first arrival to its last
	// finish (the run's start when nothing was measured).
	Start, End time.Time
	Planned    int // measured requests planned
	Warmup     int
	// AllOutputTokens counts every successful request's tokens, warmup
	// included: the denominator of energy per token over the whole run.
	AllOutputTokens int
	Results         []*prober.Result
	// Index holds each result's place in the whole plan, warmup included
	// (nil: in order from 0); a shard's report keeps it, so merging puts
	// the shards' requests back in the single plan's order.
	Index       []int
	NotSent     map[string]int
	Aborted     bool
	AbortReason string
	// Runtime is the client's read side during the run; nil where it was
	// not sampled.
	Runtime *stats.RuntimeDelays
	// Shard, when its Count is above 1, says the run was one replica's
	// share of a split burst whose arrival offsets count from Origin.
	Shard  shard.Shard
	Origin time.Time
	// Engine holds the engine's metrics pages read around the run; nil
	// where the target names no engine_metrics.
	Engine *EngineScrapes
	Trace  *TraceReplay
}

// TraceReplay counts what a trace replay sent other than the trace says:
// lengths clamped to the scenario's maxima, and lines that could not be
// read at run time (the load reads the replayed part and refuses a bad
// line, so these are lines changed since).
type TraceReplay struct {
	File          string  `json:"file"`
	Format        string  `json:"format"`
	Speedup       float64 `json:"speedup"`
	Records       int     `json:"records"` // replayed, warmup included (a shard's: its share)
	ClampedPrompt int     `json:"clamped_prompt"`
	ClampedOutput int     `json:"clamped_output"`
	SkippedLines  int     `json:"skipped_lines"`   // every shard reads every line
	Error         string  `json:"error,omitempty"` // the first skipped line's, or why the file stopped
}

// Add appends the result of the plan's arrival n, in any order, and
// widens the run's span to cover it.
func (o *Run) Add(n int, res *prober.Result) {
	if o.Start.IsZero() || res.Sched.Before(o.Start) {
		o.Start = res.Sched
	}
	if end := res.Sched.Add(res.E2E); end.After(o.End) {
		o.End = end
	}
	o.Results = append(o.Results, res)
	o.Index = append(o.Index, n)
}

// Close ends the adding. It puts the results in the plan's order, a
// conversation's turns in turn order, whoever added them in whatever order
// (a burst's workers, a merge of its shards), so every figure drawn from
// the order (the samples kept, the failures shown) is the same. A run that
// measured nothing spans no time from start, the run's own start, never
// year 1.
func (o *Run) Close(start time.Time) {
	order := make([]int, len(o.Results))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(o.Index[a], o.Index[b]), cmp.Compare(o.Results[a].Turn, o.Results[b].Turn))
	})
	results, index := make([]*prober.Result, len(order)), make([]int, len(order))
	for i, j := range order {
		results[i], index[i] = o.Results[j], o.Index[j]
	}
	o.Results, o.Index = results, index
	if o.Start.IsZero() {
		o.Start, o.End = start, start
	}
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
)

// Build turns a run into a report; verdict.Judge then gives its verdict.
func Build(b config.Burst, o Run, meta Meta) *Report {
	r := &Report{
		ID:    o.ID,
		Burst: b.Name, Target: b.Target, Model: meta.Model, Engine: meta.Engine, EngineVersion: meta.EngineVersion,
		Config: asYAMLMap(b), Seed: b.Seed, Rate: o.Rate,
		Start: o.Start.UTC(), End: o.End.UTC(), WarmupRequests: o.Warmup,
		LLMProbeVersion: meta.Version, Host: meta.Host,
		PlannedRequests: o.Planned, Requests: len(o.Results), AllOutputTokens: o.AllOutputTokens,
		Outcomes: map[prober.Outcome]int{}, TokenSources: map[prober.TokenSource]int{},
		Latency: map[string]stats.Summary{}, Aborted: o.Aborted, AbortReason: o.AbortReason,
		Samples:       map[string][]float64{},
		engineScrapes: o.Engine,
	}
	if r.ID == "" {
		r.ID = ID(b.Name, o.Start)
	}
	for _, sc := range meta.Scenarios {
		r.Scenarios = append(r.Scenarios, asYAMLMap(sc))
	}
	r.NotSent = notSent(o.NotSent)
	r.Trace = o.Trace
	r.Failures, r.FailedSamples = failures(o.Results, o.Start)
	r.DurationSeconds = o.End.Sub(o.Start).Seconds()
	t := tally{samples: map[string][]float64{}, fastest: map[string][]float64{}, outcomes: map[string][]bool{}, delayed: map[string]bool{}, met: map[string]int{}, checked: map[string]int{}, ownDelay: map[string]decide.OwnDelayMisses{}}
	for _, res := range o.Results {
		t.add(r, res, o.Start)
	}
	for _, m := range []string{"ttft", "tpot"} {
		r.Samples[m] = thin(t.samples[m], maxSamples)
	}
	for _, m := range config.BurstMetrics {
		r.Latency[m] = stats.SummarizeInOrder(t.samples[m])
		if t.delayed[m] {
			r.setWithoutOwnDelay(m, t.fastest[m])
		}
	}
	t.rates(r, o.Start)
	r.TTFTBreakdown = newTTFTBreakdown(o.Results)
	r.Turns = TurnsOf(o.Results)
	r.Replicas = ReplicasOf(o.Results)
	r.PromptCache = PromptCacheOf(o.Results)
	r.ErrorBound = newErrorBound(r.Latency["dispatch_delay"], o.Runtime, meta.Scenarios)
	r.ClientSaturated = r.ErrorBound.Saturated()
	r.Gates = append(r.Gates, decide.SLOGates(meta.Scenarios, decide.Shares{PerObjective: r.Goodput.PerObjective, Interval: r.Goodput.PerObjectiveInterval,
		Checked: r.Goodput.PerObjectiveChecked, OwnDelay: r.Goodput.PerObjectiveOwnDelay, Effective: r.Goodput.PerObjectiveEffective}, b.SLORule)...)
	if o.Shard.Count > 1 {
		r.Shard = newShardPart(o)
	}
	return r
}

// tally adds up a run's results as Build reads them: the samples of each
// latency, tokens, arrivals, and the requests that met each objective.
type tally struct {
	samples                                         map[string][]float64
	fastest                                         map[string][]float64 // samples less each request's own delay
	outcomes                                        map[string][]bool    // each objective's checks, in arrival order
	goodInOrder                                     []bool
	delayed                                         map[string]bool // some request of the metric had own delay
	met, checked                                    map[string]int
	ownDelay                                        map[string]decide.OwnDelayMisses
	prompt, output, goodOut, good, judged, arrivals int
	inputs                                          int // texts embedded or documents ranked
	lastSched                                       time.Time
	transcription                                   transcriptionTally
}

// add counts one result, and its outcome, token source and TTFT point in r.
func (t *tally) add(r *Report, res *prober.Result, start time.Time) {
	r.Outcomes[res.Outcome]++
	if why := res.Timings.Retry; why != "" {
		if r.Retries == nil {
			r.Retries = map[string]int{}
		}
		r.Retries[why]++
	}
	if res.Outcome == prober.OutcomeCancelled {
		return // llmprobe stopped it: it says nothing about the target
	}
	t.judged++
	t.goodInOrder = append(t.goodInOrder, res.Good)
	t.samples["dispatch_delay"] = append(t.samples["dispatch_delay"], res.DispatchDelay.Seconds())
	// The rate is of arrivals: a conversation's later turns are no arrival.
	if res.Turn <= 1 {
		t.arrivals++
		if res.Sched.After(t.lastSched) {
			t.lastSched = res.Sched
		}
	}
	for _, c := range res.Checks {
		t.count(c.Objective, c.Met)
		if c.WithinOwnDelay {
			o := t.ownDelay[c.Objective]
			o.Requests++
			o.UpTo = max(o.UpTo, res.OwnDelay(c.Objective).Seconds())
			t.ownDelay[c.Objective] = o
		}
	}
	if q := res.Quality; q != nil { // an answer's checks: the share of answers, apart from the requests that failed
		t.count(config.ObjectiveQuality, q.Passed)
		if !q.Passed && len(r.QualityFailed) < maxQualityFailed {
			r.QualityFailed = append(r.QualityFailed, q.Reason)
		}
	}
	if res.TokenMismatch != "" {
		if r.TokenMismatches == nil {
			r.TokenMismatches = map[string]int{}
		}
		r.TokenMismatches[res.TokenMismatch]++
	}
	if res.Outcome != prober.OutcomeSuccess {
		return
	}
	if res.TokenSource != "" { // answers without tokens (embeddings, rerank) have none
		r.TokenSources[res.TokenSource]++
	}
	if res.FirstTokenSeen() {
		t.sample("ttft", res.TTFT, res.OwnDelay(config.ObjectiveTTFT))
		if len(r.TTFTSeries) < maxSeriesPoints {
			r.TTFTSeries = append(r.TTFTSeries, [2]float64{round6(res.Sched.Sub(start).Seconds()), round6(res.TTFT.Seconds())})
		}
	}
	if res.Reasoned() && res.TTFTAnswer > 0 {
		t.sample("ttft_answer", res.TTFTAnswer, res.OwnDelay(config.ObjectiveTTFTAnswer))
	}
	if res.TTFTool > 0 {
		t.sample("ttft_tool", res.TTFTool, res.OwnDelay(""))
	}
	if res.OutputTokens > 1 && res.FirstTokenSeen() {
		t.sample("tpot", res.TPOT, res.OwnDelay(config.ObjectiveTPOT))
	}
	for _, d := range res.ITL {
		t.sample("itl", d, res.ReadDelay)
	}
	t.sample("e2e", res.E2E, res.OwnDelay(config.ObjectiveE2E))
	p := res.PromptTokensReported
	if p == 0 {
		p = res.PromptTokensRequested
	}
	t.prompt += p
	t.output += res.OutputTokens
	t.inputs += res.Inputs
	t.transcription.add(res)
	if res.Good {
		t.good++
		t.goodOut += res.OutputTokens
	}
}

// sample adds one latency of metric, and the same less own, the most
// llmprobe's own delay could have added to it.
func (t *tally) sample(metric string, latency, own time.Duration) {
	t.samples[metric] = append(t.samples[metric], latency.Seconds())
	t.fastest[metric] = append(t.fastest[metric], max(latency-own, 0).Seconds())
	t.delayed[metric] = t.delayed[metric] || own > 0
}

// setWithoutOwnDelay keeps metric's percentiles of fastest, its samples
// less each request's own delay.
func (r *Report) setWithoutOwnDelay(metric string, fastest []float64) {
	slices.Sort(fastest)
	qs := map[string]float64{}
	for _, p := range stats.Percentiles {
		qs[p.Name] = stats.Quantile(fastest, p.Q)
	}
	if r.WithoutOwnDelay == nil {
		r.WithoutOwnDelay = map[string]map[string]float64{}
	}
	r.WithoutOwnDelay[metric] = qs
}

// maxQualityFailed bounds the failed checks' reasons a report keeps.
const maxQualityFailed = 3

// count adds one check of objective, met or not.
func (t *tally) count(objective string, met bool) {
	t.outcomes[objective] = append(t.outcomes[objective], met)
	t.checked[objective]++
	if met {
		t.met[objective]++
	}
}

// rates sets r's throughput, goodput and achieved rate from the tally, over
// the measured part's span from start.
func (t *tally) rates(r *Report, start time.Time) {
	if dur := r.DurationSeconds; dur > 0 {
		perSecond := func(n int) *float64 { return orNA(float64(n)/dur, true) }
		r.Throughput = Throughput{Requests: perSecond(r.Outcomes[prober.OutcomeSuccess]), PromptTokens: perSecond(t.prompt), OutputTokens: perSecond(t.output), TotalTokens: perSecond(t.prompt + t.output)}
		r.Goodput.Requests, r.Goodput.OutputTokens = perSecond(t.good), perSecond(t.goodOut)
		if t.inputs > 0 {
			r.Throughput.Inputs = perSecond(t.inputs)
		}
		r.Transcription = t.transcription.figures(dur)
		if t.output == 0 && r.Outcomes[prober.OutcomeSuccess] > 0 { // answers without tokens (embeddings): n/a, not 0
			r.Throughput.OutputTokens, r.Goodput.OutputTokens = nil, nil
		}
	}
	if span := t.lastSched.Sub(start).Seconds(); span > 0 && t.arrivals > 1 {
		r.AchievedRate = orNA(float64(t.arrivals-1)/span, true)
	}
	r.Goodput.Ratio = orNA(float64(t.good)/float64(t.judged), t.judged > 0)
	eff := stats.EffectiveN(t.goodInOrder)
	r.Goodput.Judged, r.Goodput.RatioInterval = t.judged, stats.WilsonOfAt(t.good, t.judged, eff)
	if eff < t.judged {
		r.Goodput.Effective = eff
	}
	r.Goodput.PerObjective, r.Goodput.PerObjectiveInterval = map[string]float64{}, map[string]stats.Interval{}
	r.Goodput.PerObjectiveChecked = t.checked
	if len(t.ownDelay) > 0 {
		r.Goodput.PerObjectiveOwnDelay = t.ownDelay
	}
	for obj, n := range t.checked {
		eff := stats.EffectiveN(t.outcomes[obj])
		r.Goodput.PerObjective[obj] = float64(t.met[obj]) / float64(n)
		r.Goodput.PerObjectiveInterval[obj] = *stats.WilsonOfAt(t.met[obj], n, eff)
		if eff < n {
			if r.Goodput.PerObjectiveEffective == nil {
				r.Goodput.PerObjectiveEffective = map[string]int{}
			}
			r.Goodput.PerObjectiveEffective[obj] = eff
		}
	}
}

// orNA is v, or nil (n/a) when it has no samples behind it.
func orNA(v float64, ok bool) *float64 {
	if !ok {
		return nil
	}
	return &v
}

// thin keeps at most n evenly spaced samples, deterministically.
func thin[T any](xs []T, n int) []T {
	if len(xs) <= n {
		return xs
	}
	out := make([]T, n)
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
