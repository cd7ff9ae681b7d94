// Package collector exposes llmprobe's measurements as Prometheus metrics
// through client_golang collectors.
package collector

import (
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/prober/transport"
)

const namespace = "llmprobe"

var probeLabels = []string{"target", "model", "scenario", "traffic"}

// Probe holds the probe metrics of the metric contract, per (target, model,
// scenario, traffic), and the configuration's gauges. A histogram family's
// classic buckets hold every configured threshold of its objective, so the
// family is built anew when they change.
type Probe struct {
	classic bool // false: native histograms only
	split   bool // the histograms are Histograms' to collect

	mu       sync.RWMutex
	counters [numCounters]*prometheus.CounterVec
	gauges   [numGauges]*prometheus.GaugeVec
	hists    [numHists]*prometheus.HistogramVec
	written  written // the histograms' protobufs
	layout   layout
	series   map[[4]string]bool // the label sets that have series

	connections *prometheus.CounterVec
	retries     *prometheus.CounterVec
	objective   *prometheus.GaugeVec
	interval    *prometheus.GaugeVec
	targetRatio *prometheus.GaugeVec
	inFlight    map[inFlightKey]int

	modelOf    map[string]string   // target -> model label in use
	adapters   map[string]bool     // the configured LoRA adapters: model label values beside each target's own
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

// NewProbe returns the probe metrics. Without classic buckets every
// histogram is native only: for Prometheus servers that ingest native
// histograms, a fraction of the series.
func NewProbe(classicBuckets bool) *Probe {
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: name, Help: help}, labels)
	}
	p := &Probe{
		classic: classicBuckets,
		series:  map[[4]string]bool{},
		connections: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "target_connections_total",
			Help: "Requests by whether they opened a new connection or reused one (reused=\"true\")."}, []string{"target", "reused"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: "request_retries_total",
			Help: "Requests sent a second time because the reused connection they went out on was closed before any byte of an answer, by why (reason: eof, connection_reset, server_closed_idle)."}, []string{"target", "reason"}),
		objective:   gauge("slo_objective_seconds", "Configured threshold of each objective.", "scenario", "objective"),
		interval:    gauge("canary_interval_seconds", "Configured canary interval of each (target, scenario) schedule.", "target", "scenario"),
		targetRatio: gauge("slo_target_ratio", "Configured ratio of requests that must meet each objective; objective=\"quality\" is slo.quality_ratio, the share of checked answers that must pass their checks.", "scenario", "objective"),
		inFlight:    map[inFlightKey]int{},
		modelOf:     map[string]string{},
		objectives:  map[string][]string{},
		configured:  map[[2]string]bool{},
	}
	for i, f := range counterFamilies {
		p.counters[i] = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: f.name, Help: f.help}, f.labels())
	}
	for i, f := range gaugeFamilies {
		p.gauges[i] = gauge(f.name, f.help, f.labels()...)
	}
	p.layout = layoutFor(nil, classicBuckets)
	for i := range p.hists {
		p.hists[i] = p.newHistogram(i)
	}
	return p
}

// newHistogram builds histogram family i with the current layout's buckets.
func (p *Probe) newHistogram(i int) *prometheus.HistogramVec {
	f := histFamilies[i]
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: f.name, Help: f.help,
		Buckets:                         p.layout[i], // none: native only
		NativeHistogramBucketFactor:     nativeFactor,
		NativeHistogramMaxBucketNumber:  nativeMaxBuckets,
		NativeHistogramMinResetDuration: nativeMinReset,
	}, f.labels())
}

// vecs are the per-series families; the caller holds p.mu.
func (p *Probe) vecs() []*prometheus.MetricVec {
	out := make([]*prometheus.MetricVec, 0, numCounters+numGauges+numHists)
	for _, v := range p.counters {
		out = append(out, v.MetricVec)
	}
	for _, v := range p.gauges {
		out = append(out, v.MetricVec)
	}
	for _, v := range p.hists {
		out = append(out, v.MetricVec)
	}
	return out
}

// Describe implements prometheus.Collector.
func (p *Probe) Describe(ch chan<- *prometheus.Desc) {
	ch <- inFlightDesc
	for _, c := range []prometheus.Collector{p.connections, p.retries, p.objective, p.interval, p.targetRatio} {
		c.Describe(ch)
	}
	p.mu.RLock()
	vecs := p.vecs()
	if p.split {
		vecs = vecs[:numCounters+numGauges]
	}
	p.mu.RUnlock()
	for _, v := range vecs {
		v.Describe(ch)
	}
}

// Collect implements prometheus.Collector.
func (p *Probe) Collect(ch chan<- prometheus.Metric) {
	for _, c := range []prometheus.Collector{p.connections, p.retries, p.objective, p.interval, p.targetRatio} {
		c.Collect(ch)
	}
	// Sent after the lock is let go: a slow gatherer must not hold up
	// results or a reload.
	p.mu.RLock()
	vecs, hists := p.vecs(), p.hists
	if p.split {
		hists = [numHists]*prometheus.HistogramVec{}
	}
	inFlight := make([]prometheus.Metric, 0, len(p.inFlight))
	for k, n := range p.inFlight {
		inFlight = append(inFlight, prometheus.MustNewConstMetric(inFlightDesc, prometheus.GaugeValue, float64(n), k.target, k.scenario, k.traffic))
	}
	p.mu.RUnlock()
	for _, m := range inFlight {
		ch <- m
	}
	for _, v := range vecs[:numCounters+numGauges] {
		v.Collect(ch)
	}
	for _, v := range hists {
		if v != nil {
			p.written.collect(v, ch)
		}
	}
}

// Configure applies a configuration: SLO gauges, histogram buckets, and
// removal of series for targets and scenarios no longer configured.
func (p *Probe) Configure(cfg *config.Config) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := layoutFor(cfg, p.classic)
	for i := range l {
		if !slices.Equal(l[i], p.layout[i]) {
			// New buckets start the family again; rate() sees a counter reset.
			p.layout[i] = l[i]
			p.hists[i] = p.newHistogram(i)
			p.written.reset()
		}
	}
	p.objectives = map[string][]string{}
	p.configured = map[[2]string]bool{}
	p.interval.Reset()
	p.countRetriesOf(cfg.Targets)
	p.targets, p.scenarios = map[string]bool{}, map[string]bool{}
	for _, t := range cfg.Targets {
		p.targets[t.Name] = true
	}
	p.adapters = map[string]bool{}
	for _, s := range cfg.Scenarios {
		p.scenarios[s.Name] = true
		for _, a := range s.Adapters {
			p.adapters[a.Name] = true
		}
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
		if r := s.SLO.QualityRatio; r > 0 {
			p.targetRatio.WithLabelValues(s.Name, config.ObjectiveQuality).Set(r)
		}
	}
	for key := range p.series {
		if !p.targets[key[0]] || !p.scenarios[key[2]] || key[1] != p.modelOf[key[0]] && !p.adapters[key[1]] {
			p.dropLocked(prometheus.Labels{"target": key[0], "model": key[1], "scenario": key[2], "traffic": key[3]})
		}
	}
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

// countRetriesOf keeps a retry counter per configured target and reason,
// from zero, and none of a target no longer configured; the caller holds
// p.mu, and p.targets is still the previous configuration's.
func (p *Probe) countRetriesOf(targets []config.Target) {
	kept := map[string]bool{}
	for _, t := range targets {
		kept[t.Name] = true
		for _, reason := range transport.RetryReasons {
			p.retries.WithLabelValues(t.Name, reason)
		}
	}
	for name := range p.targets {
		if !kept[name] {
			p.retries.DeletePartialMatch(prometheus.Labels{"target": name})
		}
	}
}

// dropLocked removes every series whose labels include match; the caller
// holds p.mu.
func (p *Probe) dropLocked(match prometheus.Labels) {
	for _, v := range p.vecs() {
		v.DeletePartialMatch(match)
	}
	p.written.reset()
	for key := range p.series {
		if (match["target"] == "" || key[0] == match["target"]) && (match["model"] == "" || key[1] == match["model"]) &&
			(match["scenario"] == "" || key[2] == match["scenario"]) && (match["traffic"] == "" || key[3] == match["traffic"]) {
			delete(p.series, key)
		}
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
	key := [4]string{r.Target, r.Model, r.Scenario, r.Traffic}
	p.mu.RLock()
	if p.series[key] {
		p.record(key, r)
		p.mu.RUnlock()
		return
	}
	p.mu.RUnlock()
	// A new series: created and first recorded under the write lock, so no
	// scrape sees it half made.
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.targets != nil && (!p.targets[r.Target] || !p.scenarios[r.Scenario]) {
		return
	}
	// A configured LoRA adapter is a model beside the target's own, not
	// a model it moved to.
	if !p.adapters[r.Model] {
		if old, ok := p.modelOf[r.Target]; ok && old != r.Model {
			// The target now serves another model: drop the old model's series.
			p.dropLocked(prometheus.Labels{"target": r.Target, "model": old})
		}
		p.modelOf[r.Target] = r.Model
	}
	if !p.series[key] {
		p.newSeriesLocked(key)
	}
	p.record(key, r)
}

// newSeriesLocked creates a label set's counters at zero, so rate() and
// ratios work from the first request on. The caller holds p.mu.
func (p *Probe) newSeriesLocked(key [4]string) {
	s := sample{p: p, labels: key}
	for _, o := range prober.Outcomes {
		s.count(ctrRequests, 0, string(o))
	}
	for _, o := range p.objectives[key[2]] {
		s.count(ctrSLO, 0, o, "met")
		s.count(ctrSLO, 0, o, "missed")
	}
	for _, c := range []int{ctrGood, ctrPrompt, ctrOutput, ctrGoodOutput} {
		s.count(c, 0)
	}
	p.series[key] = true
}

// exemplarLabel names an exemplar's id: the probe's request id, which is
// also the trace id of the request's traceparent (Grafana's usual name).
const exemplarLabel = "trace_id"

// exemplarID is id if it can be an exemplar's label value (client_golang
// panics otherwise: UTF-8, at most 128 runes with the label's name), else
// "": the observation is counted without an exemplar.
func exemplarID(id string) string {
	if len(id) > prometheus.ExemplarMaxRunes-len(exemplarLabel) || !utf8.ValidString(id) {
		return ""
	}
	return id
}

// record adds a result to its series; the caller holds p.mu.
func (p *Probe) record(key [4]string, r *prober.Result) {
	if r.Timings.TTFB > 0 {
		p.connections.WithLabelValues(r.Target, strconv.FormatBool(r.Timings.ConnReused)).Inc()
	}
	if r.Timings.Retry != "" {
		p.retries.WithLabelValues(r.Target, r.Timings.Retry).Inc()
	}
	s := sample{p: p, labels: key}
	// Every observation of the request carries its id as the exemplar, so
	// a point on a latency panel opens the request's page.
	if id := exemplarID(r.RequestID); id != "" {
		s.exemplar = prometheus.Labels{exemplarLabel: id}
	}
	s.count(ctrRequests, 1, string(r.Outcome))
	if r.HTTPStatus != 0 || r.Outcome == prober.OutcomeSuccess {
		s.observe(histDispatch, r.DispatchDelay)
	}
	s.set(gaugeLast, float64(r.Sched.UnixNano())/1e9)
	if r.Timings.TTFB > 0 {
		s.observe(histTTFB, r.Timings.TTFB)
	}
	for _, c := range r.Checks {
		res := "missed"
		if c.Met {
			res = "met"
		}
		s.count(ctrSLO, 1, c.Objective, res)
	}
	if r.TokenMismatch != "" {
		s.count(ctrTokenMismatch, 1, r.TokenMismatch)
	}
	if r.Replica != "" {
		s.count(ctrReplicaRequests, 1, r.Replica, string(r.Outcome))
		if r.Outcome == prober.OutcomeSuccess && r.FirstTokenSeen() {
			s.observeWith(histReplicaTTFT, []string{r.Replica}, r.TTFT)
		}
	}
	if r.Outcome != prober.OutcomeSuccess {
		s.count(ctrFailures, 1, r.Phase, r.Reason)
		return
	}
	if r.FirstTokenSeen() {
		s.observe(histTTFT, r.TTFT)
		s.components(r.TTFTParts)
		if r.Turn >= 1 && r.Turn <= config.MaxTurns {
			s.observeWith(histTurn, []string{strconv.Itoa(r.Turn)}, r.TTFT)
		}
	}
	s.observe(histE2E, r.E2E)
	if r.OutputTokens > 1 && r.FirstTokenSeen() {
		s.observe(histTPOT, r.TPOT)
	}
	s.gaps(r.ITL)
	if r.TTFTool > 0 {
		s.observe(histTTFTool, r.TTFTool)
	}
	if r.Reasoned() {
		if r.TTFTAnswer > 0 {
			s.observe(histTTFTAnswer, r.TTFTAnswer)
		}
		s.count(ctrReasoning, float64(r.ReasoningTokens), "reasoning")
		s.count(ctrReasoning, float64(r.AnswerTokens), "answer")
	}
	if r.AudioSeconds > 0 {
		s.count(ctrAudio, r.AudioSeconds)
	}
	if r.ReferenceWords > 0 {
		s.count(ctrWordErrors, float64(r.WordErrors))
		s.count(ctrReferenceWords, float64(r.ReferenceWords))
	}
	s.counts(r)
}

// sample writes one request's figures into its series' families.
type sample struct {
	p        *Probe
	labels   [4]string
	exemplar prometheus.Labels // nil without a usable request id
}

func (s sample) values(extra []string) []string {
	return append(s.labels[:len(s.labels):len(s.labels)], extra...)
}

func (s sample) count(c int, v float64, extra ...string) {
	s.p.counters[c].WithLabelValues(s.values(extra)...).Add(v)
}

func (s sample) set(g int, v float64) { s.p.gauges[g].WithLabelValues(s.labels[:]...).Set(v) }

// observe records each of ds into histogram h of the series.
func (s sample) observe(h int, ds ...time.Duration) { s.observeWith(h, nil, ds...) }

// observeWith records each of ds into the series of histogram h with the
// extra label values.
func (s sample) observeWith(h int, extra []string, ds ...time.Duration) {
	o := s.p.hists[h].WithLabelValues(s.values(extra)...)
	for _, d := range ds {
		s.exemplify(o, d)
	}
	s.p.written.observed(o)
}

// exemplify records d into o with the request's exemplar, where it has one.
func (s sample) exemplify(o prometheus.Observer, d time.Duration) {
	if e, ok := o.(prometheus.ExemplarObserver); ok && s.exemplar != nil {
		e.ObserveWithExemplar(d.Seconds(), s.exemplar)
		return
	}
	o.Observe(d.Seconds())
}

// gaps records a request's token gaps. Only the longest carries the
// exemplar: it is the one a slow point on the ITL panel asks for, and an
// exemplar costs microseconds (client_golang builds it, and the native
// histogram's set of ten is kept spread by value) where a request has
// hundreds of gaps.
func (s sample) gaps(ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	longest := slices.Index(ds, slices.Max(ds))
	o := s.p.hists[histITL].WithLabelValues(s.labels[:]...)
	for i, d := range ds {
		if i != longest {
			o.Observe(d.Seconds())
		}
	}
	s.exemplify(o, ds[longest])
	s.p.written.observed(o)
}

// components makes parts the series' TTFT split: a component the request
// did not have goes, so the gauges add up to one request's TTFT.
func (s sample) components(parts []prober.TTFTPart) {
	if len(parts) == 0 {
		return
	}
	g := s.p.gauges[gaugeComponent]
	for _, c := range prober.Components { // bounded: only the components the prober defines
		i := slices.IndexFunc(parts, func(p prober.TTFTPart) bool { return p.Component == c })
		values := s.values([]string{c})
		if i < 0 {
			g.DeleteLabelValues(values...)
			continue
		}
		g.WithLabelValues(values...).Set(parts[i].D.Seconds())
	}
}

// counts adds a successful request's tokens and checks.
func (s sample) counts(r *prober.Result) {
	prompt := r.PromptTokensReported
	if prompt == 0 {
		prompt = r.PromptTokensRequested
	}
	s.count(ctrPrompt, float64(prompt))
	if r.CachedReported {
		s.count(ctrCached, float64(r.CachedPromptTokens))
	}
	// An answer without tokens (embeddings, rerank) has no output count:
	// n/a, not 0, and no source.
	if r.TokenSource != "" {
		s.count(ctrOutput, float64(r.OutputTokens))
		s.count(ctrSource, 1, string(r.TokenSource))
	}
	if r.Quality != nil {
		res := "failed"
		if r.Quality.Passed {
			res = "passed"
		}
		s.count(ctrQuality, 1, res)
	}
	if r.Good {
		s.count(ctrGood, 1)
		if r.TokenSource != "" {
			s.count(ctrGoodOutput, float64(r.OutputTokens))
		}
	}
}
