package collector

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/llmprobe/llmprobe/prober"
)

// The probe metrics keep one series struct per (target, model, scenario,
// traffic) instead of a client_golang vector per metric: one lookup per
// result instead of fifteen, and a scrape in the text formats writes
// straight from the counts, without building a dto.Metric for each of the
// ~30,000 lines a large configuration has (collector/exposition.go).

// Indexes of a series' plain values: counters, then gauges.
const (
	plainGood = iota
	plainPrompt
	plainOutput
	plainGoodOutput
	plainCached
	plainSuccess
	plainLast
	numPlain
)

// Indexes of a series' labelled counters, each with its own extra labels.
const (
	cellsRequests = iota
	cellsSLO
	cellsQuality
	cellsSource
	cellsFailures
	cellsReasoning
	numCells
)

// Indexes of a series' histograms.
const (
	histTTFT = iota
	histTTFB
	histITL
	histTPOT
	histE2E
	histDispatch
	histTTFTReasoning
	histTTFTAnswer
	numHists
)

type familyKind int

const (
	kindPlain familyKind = iota
	kindCells
	kindHist
	kindComponents // the TTFT components: one histogram per component, label `component`
	kindTurns      // a conversation's TTFT: one histogram per turn, label `turn`
)

// seriesFamily is one metric family of the per-series metrics.
type seriesFamily struct {
	name, help string
	typ        dto.MetricType
	kind       familyKind
	index      int      // into series.plain, series.cells or series.hists
	extra      []string // kindCells: the cells' label names, sorted
	desc       *prometheus.Desc
	// The HELP and TYPE lines of the text format and of OpenMetrics.
	textHead, omHead string
}

// seriesFamilies are sorted by name, as a scrape lists them.
var seriesFamilies = func() []*seriesFamily {
	counter, gauge, hist := dto.MetricType_COUNTER, dto.MetricType_GAUGE, dto.MetricType_HISTOGRAM
	fams := []*seriesFamily{
		{name: "requests_total", help: "Requests sent, by outcome.", typ: counter, kind: kindCells, index: cellsRequests, extra: []string{"outcome"}},
		{name: "good_requests_total", help: "Requests that succeeded and met every objective of their scenario.", typ: counter, index: plainGood},
		{name: "prompt_tokens_total", help: "Prompt tokens of successful requests, as the server reported them (requested count when it reported none).", typ: counter, index: plainPrompt},
		{name: "prompt_cached_tokens_total", help: "Prompt tokens of successful requests that the engine's prefix cache served, as its usage reported them (prompt_tokens_details.cached_tokens); a request whose usage says nothing adds nothing.", typ: counter, index: plainCached},
		{name: "output_tokens_total", help: "Output tokens of successful requests.", typ: counter, index: plainOutput},
		{name: "good_output_tokens_total", help: "Output tokens of good requests.", typ: counter, index: plainGoodOutput},
		{name: "slo_checks_total", help: "Objective checks per request; a failed request misses every objective.", typ: counter, kind: kindCells, index: cellsSLO, extra: []string{"objective", "result"}},
		{name: "quality_checks_total", help: "Answer quality checks of successful requests.", typ: counter, kind: kindCells, index: cellsQuality, extra: []string{"result"}},
		{name: "token_count_source_total", help: "Successful requests by where their output token count came from: usage (server) or chunks (fallback).", typ: counter, kind: kindCells, index: cellsSource, extra: []string{"source"}},
		{name: "request_failures_total", help: "Failed requests by where they failed (phase) and why (reason).", typ: counter, kind: kindCells, index: cellsFailures, extra: []string{"phase", "reason"}},
		{name: "probe_success", help: "Whether the last request of this series succeeded.", typ: gauge, index: plainSuccess},
		{name: "probe_last_timestamp_seconds", help: "When the last request of this series was due.", typ: gauge, index: plainLast},
		{name: "time_to_first_token_seconds", help: "Time from when a request was due to its first output token.", typ: hist, kind: kindHist, index: histTTFT},
		{name: "time_to_first_byte_seconds", help: "Time from when a request was due to the first byte of its response.", typ: hist, kind: kindHist, index: histTTFB},
		{name: "inter_token_latency_seconds", help: "Gap between output tokens, split over the tokens of each chunk.", typ: hist, kind: kindHist, index: histITL},
		{name: "time_per_output_token_seconds", help: "(E2E - TTFT) / (output tokens - 1) per request.", typ: hist, kind: kindHist, index: histTPOT},
		{name: "request_duration_seconds", help: "Time from when a successful request was due to the end of its stream.", typ: hist, kind: kindHist, index: histE2E},
		{name: "ttft_component_seconds", help: "A successful request's TTFT split into consecutive parts that add up to it (component: dispatch, client_queue, connect, engine_queue, engine_prefill, network, server_other; the engine's own timings where it reports them).", typ: hist, kind: kindComponents, extra: []string{"component"}},
		// Only requests that reasoned create these: a model without reasoning adds no lines.
		{name: "time_to_first_reasoning_token_seconds", help: "Time from when a successful request that reasoned was due to its first reasoning token (reasoning_content or reasoning).", typ: hist, kind: kindHist, index: histTTFTReasoning},
		{name: "time_to_first_answer_token_seconds", help: "Time from when a successful request that reasoned was due to its first answer token (content, text or tool_calls).", typ: hist, kind: kindHist, index: histTTFTAnswer},
		{name: "reasoning_output_tokens_total", help: "Output tokens of successful requests that reasoned, by kind: reasoning or answer.", typ: counter, kind: kindCells, index: cellsReasoning, extra: []string{"kind"}},
		// Only conversation scenarios create these; turn is bounded by config.MaxTurns.
		{name: "conversation_ttft_seconds", help: "TTFT of a conversation's successful requests by turn: from turn 2 on, a working prefix cache serves the history and TTFT falls.", typ: hist, kind: kindTurns, index: histTTFT, extra: []string{"turn"}},
		{name: "dispatch_delay_seconds", help: "How late the prober sent a request after it was due.", typ: hist, kind: kindHist, index: histDispatch},
	}
	for _, f := range fams {
		f.name = namespace + "_" + f.name
		f.desc = prometheus.NewDesc(f.name, f.help, append(slices.Clone(probeLabels), f.extra...), nil)
		typ := strings.ToLower(f.typ.String())
		f.textHead = "# HELP " + f.name + " " + helpEscaper.Replace(f.help) + "\n# TYPE " + f.name + " " + typ + "\n"
		// OpenMetrics names a counter family without its _total.
		omName := f.name
		if f.typ == counter {
			omName = strings.TrimSuffix(omName, "_total")
		}
		f.omHead = "# HELP " + omName + " " + valueEscaper.Replace(f.help) + "\n# TYPE " + omName + " " + typ + "\n"
	}
	slices.SortFunc(fams, func(a, b *seriesFamily) int { return cmp.Compare(a.name, b.name) })
	return fams
}()

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	valueEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

// series is every probe metric of one (target, model, scenario, traffic).
type series struct {
	key [4]string
	// labels is the label set as the text formats write it, pairs as dto
	// metrics carry it; both sorted by label name.
	labels  string
	pairs   []*dto.LabelPair
	created time.Time

	mu    sync.Mutex
	plain [numPlain]float64
	cells [numCells][]*cell // each sorted by its label values
	hists [numHists]*histogram
	// comps holds the TTFT component histograms, by prober.Components
	// index, and their label sets; nil until the first split request.
	comps, turns labelledHists
}

// labelledHists are one histogram per value of one extra label, in the
// values' order; each is made when its first value is observed.
type labelledHists struct {
	hists  []*histogram
	labels []string
	pairs  [][]*dto.LabelPair
}

// at returns the histogram of the i-th of n values, making it on first use.
func (l *labelledHists) at(s *series, i, n int, label, value string, bounds []float64, now time.Time) *histogram {
	if l.hists == nil {
		l.hists, l.labels, l.pairs = make([]*histogram, n), make([]string, n), make([][]*dto.LabelPair, n)
	}
	if l.hists[i] == nil {
		l.hists[i] = newHistogram(bounds, now)
		l.labels[i], l.pairs[i] = labelSet(probeLabels, s.key[:], []string{label}, []string{value})
	}
	return l.hists[i]
}

// ComponentBuckets are the TTFT components' classic buckets, half a
// millisecond to a minute: coarser than TTFT's, since a request observes
// up to six of them.
var ComponentBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60}

var componentLayout = newHistLayout(ComponentBuckets)

// componentIndex is each component's place in prober.Components.
var componentIndex = func() map[string]int {
	m := make(map[string]int, len(prober.Components))
	for i, c := range prober.Components {
		m[c] = i
	}
	return m
}()

// observeComponents records a request's TTFT split. The caller holds s.mu.
func (s *series) observeComponents(parts []prober.TTFTPart, now time.Time, id string) {
	for _, part := range parts {
		i, ok := componentIndex[part.Component]
		if !ok {
			continue // bounded: only the components the prober defines
		}
		s.comps.at(s, i, len(prober.Components), "component", part.Component, ComponentBuckets, now).observe(part.D.Seconds(), ComponentBuckets, now, id)
	}
}

// cell is one labelled counter of a series, such as requests_total with
// outcome="timeout".
type cell struct {
	values  [2]string // the extra label values; "" past the family's labels
	v       float64
	labels  string
	pairs   []*dto.LabelPair
	created time.Time
}

func newSeries(key [4]string, now time.Time) *series {
	s := &series{key: key, created: now}
	// probeLabels order is target, model, scenario, traffic.
	s.labels, s.pairs = labelSet(probeLabels, key[:], nil, nil)
	return s
}

// labelSet merges two lists of label names and values into the text form
// and the dto pairs, both sorted by name.
func labelSet(names, values, moreNames, moreValues []string) (string, []*dto.LabelPair) {
	type lv struct{ name, value string }
	all := make([]lv, 0, len(names)+len(moreNames))
	for i := range names {
		all = append(all, lv{names[i], values[i]})
	}
	for i := range moreNames {
		all = append(all, lv{moreNames[i], moreValues[i]})
	}
	slices.SortFunc(all, func(a, b lv) int { return cmp.Compare(a.name, b.name) })
	var b strings.Builder
	pairs := make([]*dto.LabelPair, len(all))
	for i, l := range all {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l.name)
		b.WriteString(`="`)
		valueEscaper.WriteString(&b, l.value)
		b.WriteByte('"')
		pairs[i] = &dto.LabelPair{Name: &l.name, Value: &l.value}
	}
	return b.String(), pairs
}

// add adds v to the cell of family index f with the given label values,
// creating it (at zero, when v is 0) if it is new. The caller holds s.mu.
func (s *series) add(f int, v float64, now time.Time, values ...string) {
	var key [2]string
	copy(key[:], values)
	cells := s.cells[f]
	i, found := slices.BinarySearchFunc(cells, key, func(c *cell, k [2]string) int {
		if c := cmp.Compare(c.values[0], k[0]); c != 0 {
			return c
		}
		return cmp.Compare(c.values[1], k[1])
	})
	if !found {
		c := &cell{values: key, created: now}
		c.labels, c.pairs = labelSet(probeLabels, s.key[:], cellFamilies[f].extra, values)
		s.cells[f] = slices.Insert(cells, i, c)
		cells = s.cells[f]
	}
	cells[i].v += v
}

// cellFamilies are the labelled families by their cells index.
var cellFamilies = func() [numCells]*seriesFamily {
	var out [numCells]*seriesFamily
	for _, f := range seriesFamilies {
		if f.kind == kindCells {
			out[f.index] = f
		}
	}
	return out
}()

// histLayout is one histogram family's classic buckets and their le
// labels in both text formats, +Inf last.
type histLayout struct {
	bounds       []float64
	textLE, omLE []string
}

func newHistLayout(bounds []float64) histLayout {
	l := histLayout{bounds: bounds}
	for _, b := range bounds {
		l.textLE = append(l.textLE, string(appendTextFloat(nil, b)))
		l.omLE = append(l.omLE, string(appendOMFloat(nil, b)))
	}
	l.textLE = append(l.textLE, "+Inf")
	l.omLE = append(l.omLE, "+Inf")
	return l
}

// metric is one probe metric as a scrape through client_golang takes it.
type metric struct {
	desc    *prometheus.Desc
	labels  []*dto.LabelPair
	counter *dto.Counter
	gauge   *dto.Gauge
	hist    *dto.Histogram
}

func (m *metric) Desc() *prometheus.Desc { return m.desc }

func (m *metric) Write(out *dto.Metric) error {
	out.Label, out.Counter, out.Gauge, out.Histogram = m.labels, m.counter, m.gauge, m.hist
	return nil
}

// metrics appends the series' metrics of family f, taken under its lock.
func (s *series) metrics(out []prometheus.Metric, f *seriesFamily, layout *[numHists]histLayout, now time.Time) []prometheus.Metric {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch f.kind {
	case kindPlain:
		v := s.plain[f.index]
		m := &metric{desc: f.desc, labels: s.pairs}
		if f.typ == dto.MetricType_COUNTER {
			m.counter = &dto.Counter{Value: &v, CreatedTimestamp: timestamppb.New(s.created)}
		} else {
			m.gauge = &dto.Gauge{Value: &v}
		}
		out = append(out, m)
	case kindCells:
		for _, c := range s.cells[f.index] {
			v := c.v
			out = append(out, &metric{desc: f.desc, labels: c.pairs, counter: &dto.Counter{Value: &v, CreatedTimestamp: timestamppb.New(c.created)}})
		}
	case kindHist:
		if h := s.hists[f.index]; h != nil {
			h.due(now)
			out = append(out, &metric{desc: f.desc, labels: s.pairs, hist: h.dto(layout[f.index].bounds)})
		}
	case kindComponents, kindTurns:
		set, bounds := &s.comps, ComponentBuckets
		if f.kind == kindTurns {
			set, bounds = &s.turns, layout[f.index].bounds
		}
		for i, h := range set.hists {
			if h != nil {
				h.due(now)
				out = append(out, &metric{desc: f.desc, labels: set.pairs[i], hist: h.dto(bounds)})
			}
		}
	}
	return out
}
