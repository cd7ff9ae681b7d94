// Package collector exposes llmprobe's measurements as Prometheus metrics.
package collector

import (
	"cmp"
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

var probeLabels = []string{"target", "model", "scenario", "traffic"}

// Probe holds the probe metrics of the metric contract: per (target, model,
// scenario, traffic) a series (series.go), and the configuration's gauges.
// Histograms are rebuilt when the set of configured SLO thresholds changes,
// because classic buckets must include every threshold.
type Probe struct {
	now func() time.Time // the clock of created timestamps and native-histogram resets

	mu     sync.RWMutex
	series map[[4]string]*series
	order  []*series // sorted by label values: the order scrapes list them in
	layout bucketLayout
	hist   [numHists]histLayout

	connections *prometheus.CounterVec
	objective   *prometheus.GaugeVec
	interval    *prometheus.GaugeVec
	targetRatio *prometheus.GaugeVec
	inFlight    map[inFlightKey]int

	modelOf    map[string]string   // target -> model label in use
	objectives map[string][]string // scenario -> configured objectives
	configured map[[2]string]bool  // (target, scenario) canary pairs
	// targets and scenarios hold the configured names; nil before the first
	// Configure. A result of anything else is a request that was in flight
	// when its target or scenario was removed: it must not bring the removed
	// series back.
	targets, scenarios map[string]bool
}

type inFlightKey struct{ target, scenario, traffic string }

var inFlightDesc = prometheus.NewDesc(namespace+"_in_flight_requests", "Requests sent and not yet finished.", []string{"target", "scenario", "traffic"}, nil)

// NewProbe returns the probe metrics with default buckets.
func NewProbe() *Probe {
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: name, Help: help}, labels)
	}
	p := &Probe{
		now:    time.Now,
		series: map[[4]string]*series{},
		connections: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "target_connections_total",
			Help: "Requests by whether they opened a new connection or reused one (reused=\"true\")."}, []string{"target", "reused"}),
		objective:   gauge("slo_objective_seconds", "Configured threshold of each objective.", "scenario", "objective"),
		interval:    gauge("canary_interval_seconds", "Configured canary interval of each (target, scenario) schedule.", "target", "scenario"),
		targetRatio: gauge("slo_target_ratio", "Configured ratio of requests that must meet each objective.", "scenario", "objective"),
		inFlight:    map[inFlightKey]int{},
		modelOf:     map[string]string{},
		objectives:  map[string][]string{},
		configured:  map[[2]string]bool{},
	}
	p.setLayout(layoutFor(nil))
	return p
}

// bucketLayout is the classic buckets of each histogram for a configuration.
type bucketLayout struct {
	ttft, itl, tpot, e2e []float64
	ttftAnswer           []float64
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
		// Reasoning takes long: the first answer token's objective is often past TTFT's.
		ttftAnswer: with(TTFTBuckets, config.ObjectiveTTFTAnswer),
	}
}

func (l bucketLayout) equal(o bucketLayout) bool {
	return slices.Equal(l.ttft, o.ttft) && slices.Equal(l.itl, o.itl) && slices.Equal(l.tpot, o.tpot) && slices.Equal(l.e2e, o.e2e) && slices.Equal(l.ttftAnswer, o.ttftAnswer)
}

// setLayout takes new buckets; the caller holds p.mu or owns p.
func (p *Probe) setLayout(l bucketLayout) {
	p.layout = l
	p.hist = [numHists]histLayout{
		histTTFT: newHistLayout(l.ttft), histTTFB: newHistLayout(l.ttft), histITL: newHistLayout(l.itl),
		histTPOT: newHistLayout(l.tpot), histE2E: newHistLayout(l.e2e), histDispatch: newHistLayout(DispatchBuckets),
		histTTFTReasoning: newHistLayout(l.ttft), histTTFTAnswer: newHistLayout(l.ttftAnswer),
	}
}

// Describe sends nothing: the histograms' buckets change with the config,
// so this is an unchecked collector.
func (p *Probe) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector.
func (p *Probe) Collect(ch chan<- prometheus.Metric) {
	p.collectConfig(ch)
	p.mu.RLock()
	defer p.mu.RUnlock()
	now := p.now()
	var batch []prometheus.Metric
	for _, f := range seriesFamilies {
		for _, s := range p.order {
			// Sent after the series' lock is let go: a slow gatherer must
			// not hold up its results.
			batch = s.metrics(batch[:0], f, &p.hist, now)
			for _, m := range batch {
				ch <- m
			}
		}
	}
}

// collectConfig sends the metrics that are not per series: the
// configuration's gauges, connections per target and requests in flight.
func (p *Probe) collectConfig(ch chan<- prometheus.Metric) {
	p.connections.Collect(ch)
	p.objective.Collect(ch)
	p.targetRatio.Collect(ch)
	p.interval.Collect(ch)
	p.mu.RLock()
	defer p.mu.RUnlock()
	for k, n := range p.inFlight {
		ch <- prometheus.MustNewConstMetric(inFlightDesc, prometheus.GaugeValue, float64(n), k.target, k.scenario, k.traffic)
	}
}

// probeConfig is the part of the probe metrics Exposition gathers through
// client_golang in every format.
type probeConfig struct{ p *Probe }

func (c probeConfig) Describe(chan<- *prometheus.Desc)    {}
func (c probeConfig) Collect(ch chan<- prometheus.Metric) { c.p.collectConfig(ch) }

// Configure applies a configuration: SLO gauges, histogram buckets, and
// removal of series for targets and scenarios no longer configured.
func (p *Probe) Configure(cfg *config.Config) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l := layoutFor(cfg); !l.equal(p.layout) {
		// Changing buckets resets the histograms; rate() sees a counter reset.
		p.setLayout(l)
		for _, s := range p.order {
			s.mu.Lock()
			s.hists, s.turns = [numHists]*histogram{}, labelledHists{}
			s.mu.Unlock()
		}
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
	p.deleteLocked(func(key [4]string) bool { return !p.targets[key[0]] || !p.scenarios[key[2]] })
	for target := range p.modelOf {
		if !p.targets[target] {
			delete(p.modelOf, target)
		}
	}
	for k, n := range p.inFlight {
		if n <= 0 && !p.configured[[2]string{k.target, k.scenario}] {
			delete(p.inFlight, k)
		}
	}
}

// deleteLocked removes the series whose key matches; the caller holds p.mu.
func (p *Probe) deleteLocked(match func(key [4]string) bool) {
	p.order = slices.DeleteFunc(p.order, func(s *series) bool {
		if !match(s.key) {
			return false
		}
		delete(p.series, s.key)
		return true
	})
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
	key := [4]string{r.Target, r.Model, r.Scenario, r.Traffic}
	p.mu.RLock()
	if s := p.series[key]; s != nil {
		p.record(s, r)
		p.mu.RUnlock()
		return
	}
	p.mu.RUnlock()
	// A new series: the first result is recorded under the write lock, so
	// no scrape sees the series before it.
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.targets != nil && (!p.targets[r.Target] || !p.scenarios[r.Scenario]) {
		return
	}
	if old, ok := p.modelOf[r.Target]; ok && old != r.Model {
		// The target now serves another model: drop the old model's series.
		p.deleteLocked(func(k [4]string) bool { return k[0] == r.Target && k[1] == old })
	}
	p.modelOf[r.Target] = r.Model
	s := p.series[key]
	if s == nil {
		s = p.newSeriesLocked(key)
	}
	p.record(s, r)
}

// newSeriesLocked creates a label set's counters at zero, so rate() and
// ratios work from the first request on. The caller holds p.mu.
func (p *Probe) newSeriesLocked(key [4]string) *series {
	now := p.now()
	s := newSeries(key, now)
	for _, o := range prober.Outcomes {
		s.add(cellsRequests, 0, now, string(o))
	}
	for _, o := range p.objectives[key[2]] {
		s.add(cellsSLO, 0, now, o, "met")
		s.add(cellsSLO, 0, now, o, "missed")
	}
	p.series[key] = s
	i, _ := slices.BinarySearchFunc(p.order, s, func(a, b *series) int {
		// Label name order: model, scenario, target, traffic.
		for _, j := range []int{1, 2, 0, 3} {
			if c := cmp.Compare(a.key[j], b.key[j]); c != 0 {
				return c
			}
		}
		return 0
	})
	p.order = slices.Insert(p.order, i, s)
	return s
}

// record adds a result to its series; the caller holds p.mu.
func (p *Probe) record(s *series, r *prober.Result) {
	if r.Timings.TTFB > 0 {
		p.connections.WithLabelValues(r.Target, strconv.FormatBool(r.Timings.ConnReused)).Inc()
	}
	now := p.now()
	// Every observation of the request carries its id as the exemplar, so
	// a point on a latency panel opens the request's page.
	id := exemplarID(r.RequestID)
	s.mu.Lock()
	defer s.mu.Unlock()
	hist := func(k int, d time.Duration) {
		h := s.hists[k]
		if h == nil {
			h = newHistogram(p.hist[k].bounds, now)
			s.hists[k] = h
		}
		h.observe(d.Seconds(), p.hist[k].bounds, now, id)
	}
	s.add(cellsRequests, 1, now, string(r.Outcome))
	if r.HTTPStatus != 0 || r.Outcome == prober.OutcomeSuccess {
		hist(histDispatch, r.DispatchDelay)
	}
	s.plain[plainLast] = float64(r.Sched.UnixNano()) / 1e9
	if r.Timings.TTFB > 0 {
		hist(histTTFB, r.Timings.TTFB)
	}
	for _, c := range r.Checks {
		res := "missed"
		if c.Met {
			res = "met"
		}
		s.add(cellsSLO, 1, now, c.Objective, res)
	}
	if r.Outcome != prober.OutcomeSuccess {
		s.plain[plainSuccess] = 0
		s.add(cellsFailures, 1, now, r.Phase, r.Reason)
		return
	}
	s.plain[plainSuccess] = 1
	if r.FirstTokenSeen() {
		hist(histTTFT, r.TTFT)
		s.observeComponents(r.TTFTParts, now, id)
		if r.Turn >= 1 && r.Turn <= config.MaxTurns {
			bounds := p.hist[histTTFT].bounds
			s.turns.at(s, r.Turn-1, config.MaxTurns, "turn", strconv.Itoa(r.Turn), bounds, now).observe(r.TTFT.Seconds(), bounds, now, id)
		}
	}
	hist(histE2E, r.E2E)
	if r.OutputTokens > 1 && r.FirstTokenSeen() {
		hist(histTPOT, r.TPOT)
	}
	for _, d := range r.ITL {
		hist(histITL, d)
	}
	if r.Reasoned() {
		if r.TTFTReasoning > 0 {
			hist(histTTFTReasoning, r.TTFTReasoning)
		}
		if r.TTFTAnswer > 0 {
			hist(histTTFTAnswer, r.TTFTAnswer)
		}
		s.add(cellsReasoning, float64(r.ReasoningTokens), now, "reasoning")
		s.add(cellsReasoning, float64(r.AnswerTokens), now, "answer")
	}
	prompt := r.PromptTokensReported
	if prompt == 0 {
		prompt = r.PromptTokensRequested
	}
	s.plain[plainPrompt] += float64(prompt)
	if r.CachedReported {
		s.plain[plainCached] += float64(r.CachedPromptTokens)
	}
	s.plain[plainOutput] += float64(r.OutputTokens)
	s.add(cellsSource, 1, now, string(r.TokenSource))
	if r.Quality != nil {
		res := "failed"
		if r.Quality.Passed {
			res = "passed"
		}
		s.add(cellsQuality, 1, now, res)
	}
	if r.Good {
		s.plain[plainGood]++
		s.plain[plainGoodOutput] += float64(r.OutputTokens)
	}
}
