// Package collector exposes llmprobe's measurements as Prometheus metrics.
package collector

import (
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
)

const namespace = "llmprobe"

// Default classic buckets. Where latency SLOs live (TTFT 50 ms – 2 s, ITL
// and TPOT 5 – 200 ms) they follow the R20 preferred numbers, 12–14% apart, so
// histogram_quantile's interpolation stays within a few percent of the exact
// percentile; outside, vLLM's server-side boundaries, so client and server
// histograms line up on one dashboard. Configured thresholds are added as
// boundaries (layoutFor).
var (
	TTFTBuckets = join([]float64{0.001, 0.005, 0.01, 0.02, 0.03, 0.04}, preferred(0.05, 2), []float64{2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560})
	ITLBuckets  = join([]float64{0.001, 0.0025}, preferred(0.005, 0.2), []float64{0.25, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80})
	E2EBuckets  = []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680}
	// Dispatch delay is the prober's own lateness: microseconds matter.
	DispatchBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
)

// r20 is the Renard R20 series (ISO 3): twenty steps a decade, each ~12%.
var r20 = []string{"1", "1.12", "1.25", "1.4", "1.6", "1.8", "2", "2.24", "2.5", "2.8", "3.15", "3.55", "4", "4.5", "5", "5.6", "6.3", "7.1", "8", "9"}

// preferred returns the R20 numbers in [lo, hi], parsed from their decimal
// text so that bucket labels read le="0.112", not a float's rounding error.
func preferred(lo, hi float64) []float64 {
	var out []float64
	for exp := int(math.Floor(math.Log10(lo))); ; exp++ {
		for _, m := range r20 {
			v, _ := strconv.ParseFloat(m+"e"+strconv.Itoa(exp), 64)
			if v > hi*(1+1e-9) {
				return out
			}
			if v >= lo*(1-1e-9) {
				out = append(out, v)
			}
		}
	}
}

func join(parts ...[]float64) []float64 {
	out := slices.Concat(parts...)
	slices.Sort(out)
	return slices.Compact(out)
}

// Native histograms: ~10% resolution, bounded bucket count.
const (
	nativeFactor     = 1.1
	nativeMaxBuckets = 160
)

var probeLabels = []string{"target", "model", "scenario", "traffic"}

// Probe holds the probe metrics of the metric contract. Histograms are
// rebuilt when the set of configured SLO thresholds changes, because classic
// buckets must include every threshold.
type Probe struct {
	mu sync.RWMutex
	h  *histograms

	requests      *prometheus.CounterVec
	good          *prometheus.CounterVec
	promptTokens  *prometheus.CounterVec
	outputTokens  *prometheus.CounterVec
	goodOutput    *prometheus.CounterVec
	sloChecks     *prometheus.CounterVec
	qualityChecks *prometheus.CounterVec
	tokenSource   *prometheus.CounterVec
	failures      *prometheus.CounterVec
	connections   *prometheus.CounterVec
	objective     *prometheus.GaugeVec
	interval      *prometheus.GaugeVec
	targetRatio   *prometheus.GaugeVec
	success       *prometheus.GaugeVec
	lastTimestamp *prometheus.GaugeVec
	inFlight      map[inFlightKey]int

	seen       map[[4]string]bool  // label sets already initialised
	modelOf    map[string]string   // target -> model label in use
	objectives map[string][]string // scenario -> configured objectives
	configured map[[2]string]bool  // (target, scenario) canary pairs
	// targets and scenarios hold the configured names; nil before the first
	// Configure. A result of anything else is a request that was in flight
	// when its target or scenario was removed: it must not bring the removed
	// series back.
	targets, scenarios map[string]bool
	layout             bucketLayout
}

type inFlightKey struct{ target, scenario, traffic string }

var inFlightDesc = prometheus.NewDesc(namespace+"_in_flight_requests", "Requests sent and not yet finished.", []string{"target", "scenario", "traffic"}, nil)

type histograms struct {
	ttft, ttfb, itl, tpot, e2e, dispatch *prometheus.HistogramVec
}

// NewProbe returns the probe metrics with default buckets.
func NewProbe() *Probe {
	counter := func(name, help string, extra ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: name, Help: help}, append(slices.Clone(probeLabels), extra...))
	}
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: name, Help: help}, labels)
	}
	p := &Probe{
		requests:      counter("requests_total", "Requests sent, by outcome.", "outcome"),
		good:          counter("good_requests_total", "Requests that succeeded and met every objective of their scenario."),
		promptTokens:  counter("prompt_tokens_total", "Prompt tokens of successful requests, as the server reported them (requested count when it reported none)."),
		outputTokens:  counter("output_tokens_total", "Output tokens of successful requests."),
		goodOutput:    counter("good_output_tokens_total", "Output tokens of good requests."),
		sloChecks:     counter("slo_checks_total", "Objective checks per request; a failed request misses every objective.", "objective", "result"),
		qualityChecks: counter("quality_checks_total", "Answer quality checks of successful requests.", "result"),
		tokenSource:   counter("token_count_source_total", "Successful requests by where their output token count came from: usage (server) or chunks (fallback).", "source"),
		failures:      counter("request_failures_total", "Failed requests by where they failed (phase) and why (reason).", "phase", "reason"),
		connections: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "target_connections_total",
			Help: "Requests by whether they opened a new connection or reused one (reused=\"true\")."}, []string{"target", "reused"}),
		objective:     gauge("slo_objective_seconds", "Configured threshold of each objective.", "scenario", "objective"),
		interval:      gauge("canary_interval_seconds", "Configured canary interval of each (target, scenario) schedule.", "target", "scenario"),
		targetRatio:   gauge("slo_target_ratio", "Configured ratio of requests that must meet each objective.", "scenario", "objective"),
		success:       gauge("probe_success", "Whether the last request of this series succeeded.", probeLabels...),
		lastTimestamp: gauge("probe_last_timestamp_seconds", "When the last request of this series was due.", probeLabels...),
		inFlight:      map[inFlightKey]int{},
		seen:          map[[4]string]bool{},
		modelOf:       map[string]string{},
		objectives:    map[string][]string{},
		configured:    map[[2]string]bool{},
	}
	p.layout = layoutFor(nil)
	p.h = newHistograms(p.layout)
	return p
}

// bucketLayout is the classic buckets of each histogram for a configuration.
type bucketLayout struct {
	ttft, itl, tpot, e2e []float64
}

func layoutFor(cfg *config.Config) bucketLayout {
	with := func(base []float64, objectives ...string) []float64 {
		out := slices.Clone(base)
		if cfg != nil {
			for _, o := range objectives {
				out = append(out, cfg.Thresholds(o)...)
			}
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	return bucketLayout{
		ttft: with(TTFTBuckets, config.ObjectiveTTFT),
		itl:  with(ITLBuckets, config.ObjectiveTPOT, config.ObjectiveStall),
		tpot: with(ITLBuckets, config.ObjectiveTPOT),
		e2e:  with(E2EBuckets, config.ObjectiveE2E),
	}
}

func (l bucketLayout) equal(o bucketLayout) bool {
	return slices.Equal(l.ttft, o.ttft) && slices.Equal(l.itl, o.itl) && slices.Equal(l.tpot, o.tpot) && slices.Equal(l.e2e, o.e2e)
}

func newHistograms(l bucketLayout) *histograms {
	hist := func(name, help string, buckets []float64) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace:                       namespace,
			Name:                            name,
			Help:                            help,
			Buckets:                         buckets,
			NativeHistogramBucketFactor:     nativeFactor,
			NativeHistogramMaxBucketNumber:  nativeMaxBuckets,
			NativeHistogramMinResetDuration: time.Hour,
		}, probeLabels)
	}
	return &histograms{
		ttft:     hist("time_to_first_token_seconds", "Time from when a request was due to its first output token.", l.ttft),
		ttfb:     hist("time_to_first_byte_seconds", "Time from when a request was due to the first byte of its response.", l.ttft),
		itl:      hist("inter_token_latency_seconds", "Gap between output tokens, split over the tokens of each chunk.", l.itl),
		tpot:     hist("time_per_output_token_seconds", "(E2E - TTFT) / (output tokens - 1) per request.", l.tpot),
		e2e:      hist("request_duration_seconds", "Time from when a successful request was due to the end of its stream.", l.e2e),
		dispatch: hist("dispatch_delay_seconds", "How late the prober sent a request after it was due.", DispatchBuckets),
	}
}

func (h *histograms) all() []*prometheus.HistogramVec {
	return []*prometheus.HistogramVec{h.ttft, h.ttfb, h.itl, h.tpot, h.e2e, h.dispatch}
}

func (p *Probe) vecs() []interface {
	prometheus.Collector
	DeletePartialMatch(prometheus.Labels) int
} {
	return []interface {
		prometheus.Collector
		DeletePartialMatch(prometheus.Labels) int
	}{
		p.requests, p.good, p.promptTokens, p.outputTokens, p.goodOutput, p.sloChecks, p.qualityChecks,
		p.tokenSource, p.failures, p.connections, p.success, p.lastTimestamp,
	}
}

// Describe sends nothing: the histograms' buckets change with the config,
// so this is an unchecked collector.
func (p *Probe) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector.
func (p *Probe) Collect(ch chan<- prometheus.Metric) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, h := range p.h.all() {
		h.Collect(ch)
	}
	for _, v := range p.vecs() {
		v.Collect(ch)
	}
	p.objective.Collect(ch)
	p.targetRatio.Collect(ch)
	p.interval.Collect(ch)
	for k, n := range p.inFlight {
		ch <- prometheus.MustNewConstMetric(inFlightDesc, prometheus.GaugeValue, float64(n), k.target, k.scenario, k.traffic)
	}
}

// Configure applies a configuration: SLO gauges, histogram buckets, and
// removal of series for targets and scenarios no longer configured.
func (p *Probe) Configure(cfg *config.Config) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l := layoutFor(cfg); !l.equal(p.layout) {
		// Changing buckets resets the histograms; rate() sees a counter reset.
		p.h, p.layout = newHistograms(l), l
	}
	p.objectives = map[string][]string{}
	p.configured = map[[2]string]bool{}
	p.interval.Reset()
	p.targets, p.scenarios = map[string]bool{}, map[string]bool{}
	for _, t := range cfg.Targets {
		p.targets[t.Name] = true
	}
	for _, s := range cfg.Scenarios {
		p.scenarios[s.Name] = true
	}
	for _, pair := range cfg.CanaryPairs() {
		p.configured[[2]string{pair.Target, pair.Scenario}] = true
		p.interval.WithLabelValues(pair.Target, pair.Scenario).Set(pair.Interval.Seconds())
	}
	p.objective.Reset()
	p.targetRatio.Reset()
	for _, s := range cfg.Scenarios {
		for _, o := range s.SLO.Objectives() {
			p.objectives[s.Name] = append(p.objectives[s.Name], o.Name)
			p.objective.WithLabelValues(s.Name, o.Name).Set(o.Threshold.Seconds())
			p.targetRatio.WithLabelValues(s.Name, o.Name).Set(s.SLO.TargetRatio)
		}
	}
	for key := range p.seen {
		_, okT := cfg.Target(key[0])
		_, okS := cfg.Scenario(key[2])
		if okT && okS {
			continue
		}
		p.deleteLocked(prometheus.Labels{"target": key[0], "scenario": key[2]})
		delete(p.seen, key)
	}
	for target := range p.modelOf {
		if _, ok := cfg.Target(target); !ok {
			delete(p.modelOf, target)
		}
	}
	for k, n := range p.inFlight {
		if n <= 0 && !p.configured[[2]string{k.target, k.scenario}] {
			delete(p.inFlight, k)
		}
	}
}

func (p *Probe) deleteLocked(match prometheus.Labels) {
	for _, v := range p.vecs() {
		v.DeletePartialMatch(match)
	}
	for _, h := range p.h.all() {
		h.DeletePartialMatch(match)
	}
}

// Started implements prober.InFlight.
func (p *Probe) Started(target, scenario, traffic string) {
	p.mu.Lock()
	p.inFlight[inFlightKey{target, scenario, traffic}]++
	p.mu.Unlock()
}

// Finished implements prober.InFlight. An idle series of a pair no longer
// configured disappears.
func (p *Probe) Finished(target, scenario, traffic string) {
	p.mu.Lock()
	k := inFlightKey{target, scenario, traffic}
	p.inFlight[k]--
	if p.inFlight[k] <= 0 && !p.configured[[2]string{target, scenario}] {
		delete(p.inFlight, k)
	}
	p.mu.Unlock()
}

// Observe records one finished request, unless its target or scenario is no
// longer configured, or llmprobe itself cancelled it.
func (p *Probe) Observe(r *prober.Result) {
	if r.Outcome == prober.OutcomeCancelled {
		return
	}
	p.mu.Lock()
	if p.targets != nil && (!p.targets[r.Target] || !p.scenarios[r.Scenario]) {
		p.mu.Unlock()
		return
	}
	if old, ok := p.modelOf[r.Target]; ok && old != r.Model {
		// The target now serves another model: drop the old model's series.
		p.deleteLocked(prometheus.Labels{"target": r.Target, "model": old})
		for k := range p.seen {
			if k[0] == r.Target && k[1] == old {
				delete(p.seen, k)
			}
		}
	}
	p.modelOf[r.Target] = r.Model
	key := [4]string{r.Target, r.Model, r.Scenario, r.Traffic}
	if !p.seen[key] {
		p.seen[key] = true
		p.initSeries(key)
	}
	p.mu.Unlock()

	p.mu.RLock()
	defer p.mu.RUnlock()
	lv := key[:]
	p.requests.WithLabelValues(append(lv, string(r.Outcome))...).Inc()
	if r.HTTPStatus != 0 || r.Outcome == prober.OutcomeSuccess {
		p.h.dispatch.WithLabelValues(lv...).Observe(r.DispatchDelay.Seconds())
	}
	p.lastTimestamp.WithLabelValues(lv...).Set(float64(r.Sched.UnixNano()) / 1e9)
	if r.Timings.TTFB > 0 {
		p.h.ttfb.WithLabelValues(lv...).Observe(r.Timings.TTFB.Seconds())
		p.connections.WithLabelValues(r.Target, strconv.FormatBool(r.Timings.ConnReused)).Inc()
	}
	for _, c := range r.Checks {
		res := "missed"
		if c.Met {
			res = "met"
		}
		p.sloChecks.WithLabelValues(append(lv, c.Objective, res)...).Inc()
	}
	if r.Outcome != prober.OutcomeSuccess {
		p.success.WithLabelValues(lv...).Set(0)
		p.failures.WithLabelValues(append(lv, r.Phase, r.Reason)...).Inc()
		return
	}
	p.success.WithLabelValues(lv...).Set(1)
	if r.FirstTokenSeen() {
		p.h.ttft.WithLabelValues(lv...).Observe(r.TTFT.Seconds())
	}
	p.h.e2e.WithLabelValues(lv...).Observe(r.E2E.Seconds())
	if r.OutputTokens > 1 && r.FirstTokenSeen() {
		p.h.tpot.WithLabelValues(lv...).Observe(r.TPOT.Seconds())
	}
	itl := p.h.itl.WithLabelValues(lv...)
	for _, d := range r.ITL {
		itl.Observe(d.Seconds())
	}
	prompt := r.PromptTokensReported
	if prompt == 0 {
		prompt = r.PromptTokensRequested
	}
	p.promptTokens.WithLabelValues(lv...).Add(float64(prompt))
	p.outputTokens.WithLabelValues(lv...).Add(float64(r.OutputTokens))
	p.tokenSource.WithLabelValues(append(lv, string(r.TokenSource))...).Inc()
	if r.Quality != nil {
		res := "failed"
		if r.Quality.Passed {
			res = "passed"
		}
		p.qualityChecks.WithLabelValues(append(lv, res)...).Inc()
	}
	if r.Good {
		p.good.WithLabelValues(lv...).Inc()
		p.goodOutput.WithLabelValues(lv...).Add(float64(r.OutputTokens))
	}
}

// initSeries creates a new label set's counters at zero, so rate() and
// ratios work from the first request on.
func (p *Probe) initSeries(key [4]string) {
	lv := key[:]
	for _, o := range prober.Outcomes {
		p.requests.WithLabelValues(append(lv, string(o))...)
	}
	p.good.WithLabelValues(lv...)
	p.promptTokens.WithLabelValues(lv...)
	p.outputTokens.WithLabelValues(lv...)
	p.goodOutput.WithLabelValues(lv...)
	for _, o := range p.objectives[key[2]] {
		for _, res := range []string{"met", "missed"} {
			p.sloChecks.WithLabelValues(append(lv, o, res)...)
		}
	}
}
