package enginemetrics

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// Scope says whose requests the engine's figures count.
const Scope = "server-wide, all clients: the engine's histograms count every request it served between the two scrapes, not only llmprobe's"

// ErrRestarted is the reason a window has no delta when a counter went back.
const ErrRestarted = "engine restarted between scrapes: no delta"

// Quantiles the figures give.
var Quantiles = []struct {
	Name string
	Q    float64
}{{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}}

// Window is what the engine's own metrics say about the time between two
// scrapes. A figure with nothing behind it says why, never 0.
type Window struct {
	URL          string `json:"url"`
	Family       string `json:"family"`
	FamilySource string `json:"family_source,omitempty"`
	Scope        string `json:"scope"`
	// Model is the model_name the series were filtered to, where the family
	// labels its series with one.
	Model   string   `json:"model,omitempty"`
	Before  *Page    `json:"before"`
	After   *Page    `json:"after"`
	Error   string   `json:"error,omitempty"`
	Figures []Figure `json:"figures"`
	Gauges  []Gauge  `json:"gauges"`
	// SpecDecode is the draft model's acceptance; nil for a family that
	// exports none (TGI, TensorRT-LLM here).
	SpecDecode *SpecDecode `json:"spec_decode,omitempty"`
	// KVTransfer is the KV-cache transfers of disaggregated prefill, every
	// transfer the engine made in the window: an aggregate, no request's
	// own; nil for a family that exports none.
	KVTransfer *Figure `json:"kv_transfer,omitempty"`
	// LoRA is the engine's adapters at the window's end; nil where it
	// exports none (vLLM without --enable-lora, every other family).
	LoRA *LoRA `json:"lora,omitempty"`
}

// Figure is one server-side latency over the window, in seconds.
type Figure struct {
	Metric string `json:"metric"`
	// Source is the engine's series it comes from.
	Source string   `json:"source,omitempty"`
	Count  *float64 `json:"count"`
	// Unit is what Count counts: requests, tokens, or intervals (gaps
	// between tokens).
	Unit      string     `json:"count_unit,omitempty"`
	Mean      *float64   `json:"mean"`
	Quantiles []Quantile `json:"quantiles,omitempty"`
	// Note says how a derived figure was made.
	Note string `json:"note,omitempty"`
	// NA says why there is no figure.
	NA string `json:"na,omitempty"`
}

// Quantile is an estimate from the delta buckets, interpolated linearly
// within its bucket as histogram_quantile does: the truth lies somewhere
// between BucketLower and BucketUpper (null: the +Inf bucket, unbounded).
type Quantile struct {
	Name        string   `json:"quantile"`
	Value       float64  `json:"value"`
	BucketLower float64  `json:"bucket_lower"`
	BucketUpper *float64 `json:"bucket_upper"`
}

// Gauge is one engine gauge at each scrape, and over the reads taken
// while the run went on (Samples of them; Min, Mean, Max nil without).
type Gauge struct {
	Metric  string   `json:"metric"`
	Source  string   `json:"source,omitempty"`
	Before  *float64 `json:"before"`
	After   *float64 `json:"after"`
	Samples int      `json:"samples,omitempty"`
	Min     *float64 `json:"min,omitempty"`
	Mean    *float64 `json:"mean,omitempty"`
	Max     *float64 `json:"max,omitempty"`
	NA      string   `json:"na,omitempty"`
}

// Lookup returns the named figure.
func (w *Window) Lookup(metric string) (Figure, bool) {
	if w == nil {
		return Figure{}, false
	}
	i := slices.IndexFunc(w.Figures, func(f Figure) bool { return f.Metric == metric })
	if i < 0 {
		return Figure{}, false
	}
	return w.Figures[i], true
}

// Quantile returns the named quantile.
func (f Figure) Quantile(name string) (Quantile, bool) {
	i := slices.IndexFunc(f.Quantiles, func(q Quantile) bool { return q.Name == name })
	if i < 0 {
		return Quantile{}, false
	}
	return f.Quantiles[i], true
}

// Options say how to read two pages.
type Options struct {
	// Family is the configured family; auto (or empty) takes Engine's.
	Family string
	// Engine is the engine target_info detected.
	Engine string
	// Model filters series that carry the family's model label; empty
	// keeps every series.
	Model string
	// During are the pages a Sampler read while the run went on.
	During []*Page
}

// Compare computes the window from before to after. It never fails: what
// it cannot say carries its reason.
func Compare(before, after *Page, o Options) *Window {
	w := &Window{Scope: Scope, Before: before, After: after}
	name, source := resolve(o.Family, o.Engine, after)
	w.Family, w.FamilySource = name, source
	fam, known := families[name]
	if known && fam.modelLabel != "" {
		w.Model = o.Model
	}
	switch {
	case !before.OK():
		w.Error = "the scrape before failed: " + before.Error
	case !after.OK():
		w.Error = "the scrape after failed: " + after.Error
	case !known:
		w.Error = fmt.Sprintf("family auto: target_info says engine %s and the page has no series llmprobe knows; set engine_metrics.family", quoteOr(o.Engine))
	case restarted(before, after):
		w.Error = ErrRestarted
	}
	if w.Error != "" {
		return w.failed()
	}
	for _, m := range Metrics {
		w.Figures = append(w.Figures, fam.figure(m, before, after, w.Model))
	}
	for _, r := range fam.ratios {
		if !slices.Contains(Metrics, r.metric) {
			w.Figures = append(w.Figures, fam.ratioFigure(r, before, after))
		}
	}
	for _, g := range gaugeNames {
		w.Gauges = append(w.Gauges, fam.gauge(g, before, after, w.Model, o.During))
	}
	w.SpecDecode = specDecodeOf(name, fam, before, after, w.Model, o.During)
	w.KVTransfer = fam.kvTransferFigure(before, after, w.Model)
	w.LoRA = loraOf(after)
	// A figure that went back means a restart: no figure of the window holds.
	for _, f := range w.Figures {
		if f.NA == ErrRestarted {
			w.Error = ErrRestarted
			return w.failed()
		}
	}
	return w
}

// failed makes every figure n/a with the window's reason.
func (w *Window) failed() *Window {
	w.Figures, w.Gauges = nil, nil
	for _, m := range Metrics {
		w.Figures = append(w.Figures, Figure{Metric: m, NA: w.Error})
	}
	for _, g := range gaugeNames {
		w.Gauges = append(w.Gauges, Gauge{Metric: g, NA: w.Error})
	}
	if w.SpecDecode != nil {
		w.SpecDecode = &SpecDecode{NA: w.Error}
	}
	if w.KVTransfer != nil {
		w.KVTransfer = &Figure{Metric: MetricKVTransfer, NA: w.Error}
	}
	return w
}

// restarted says whether the engine's process changed between the pages.
func restarted(before, after *Page) bool {
	b, a := gaugeSum(before.families[processStart], series{name: processStart}, "", ""), gaugeSum(after.families[processStart], series{name: processStart}, "", "")
	if b != nil && a != nil && *a != *b {
		return true
	}
	// Any known histogram or counter series that shrank or vanished.
	for name, bf := range before.families {
		af := after.families[name]
		switch bf.GetType() {
		case dto.MetricType_HISTOGRAM, dto.MetricType_COUNTER, dto.MetricType_SUMMARY:
		default:
			continue
		}
		am := map[string]*dto.Metric{}
		if af != nil {
			for _, m := range af.Metric {
				am[labelKey(m)] = m
			}
		}
		for _, m := range bf.Metric {
			x, ok := am[labelKey(m)]
			if !ok || shrank(m, x) {
				return true
			}
		}
	}
	return false
}

func shrank(b, a *dto.Metric) bool {
	switch {
	case b.Counter != nil:
		return a.Counter == nil || a.Counter.GetValue() < b.Counter.GetValue()
	case b.Histogram != nil:
		if a.Histogram == nil || a.Histogram.GetSampleCount() < b.Histogram.GetSampleCount() {
			return true
		}
		ab := map[float64]uint64{}
		for _, bk := range a.Histogram.Bucket {
			ab[bk.GetUpperBound()] = bk.GetCumulativeCount()
		}
		for _, bk := range b.Histogram.Bucket {
			if v, ok := ab[bk.GetUpperBound()]; ok && v < bk.GetCumulativeCount() {
				return true
			}
		}
	case b.Summary != nil:
		return a.Summary == nil || a.Summary.GetSampleCount() < b.Summary.GetSampleCount()
	}
	return false
}

func labelKey(m *dto.Metric) string {
	parts := make([]string, 0, len(m.Label))
	for _, l := range m.Label {
		parts = append(parts, l.GetName()+"="+l.GetValue())
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func labelValue(m *dto.Metric, name string) (string, bool) {
	for _, l := range m.Label {
		if l.GetName() == name {
			return l.GetValue(), true
		}
	}
	return "", false
}

// selected filters a family's series to one selector and model.
func selected(mf *dto.MetricFamily, s series, modelLabel, model string) (out []*dto.Metric, otherModels []string) {
	if mf == nil {
		return nil, nil
	}
	for _, m := range mf.Metric {
		if s.label != "" {
			if v, _ := labelValue(m, s.label); v != s.value {
				continue
			}
		}
		if modelLabel != "" && model != "" {
			if v, ok := labelValue(m, modelLabel); ok && v != model {
				if len(otherModels) < 3 && !slices.Contains(otherModels, v) {
					otherModels = append(otherModels, v)
				}
				continue
			}
		}
		out = append(out, m)
	}
	return out, otherModels
}

// pick returns the first candidate either page carries.
func pick(cands []series, before, after *Page) (series, bool) {
	for _, c := range cands {
		if after.families[c.name] != nil || before.families[c.name] != nil {
			return c, true
		}
	}
	return series{}, false
}

func (f family) figure(metric string, before, after *Page, model string) Figure {
	out := Figure{Metric: metric}
	for _, r := range f.ratios {
		if r.metric == metric {
			return f.ratioFigure(r, before, after)
		}
	}
	if why, ok := f.absent[metric]; ok {
		out.NA = why
		return out
	}
	cands := f.hist[metric]
	s, ok := pick(cands, before, after)
	if !ok {
		names := make([]string, len(cands))
		for i, c := range cands {
			names[i] = c.name
		}
		out.NA = "the page has no " + strings.Join(names, " or ") + " (an older engine version, or the metric is disabled)"
		return out
	}
	return f.histogramFigure(out, s, before, after, model)
}

// histogramFigure is figure out from histogram s's delta between the pages,
// its bounds and sum in seconds (s.scale converts other units).
func (f family) histogramFigure(out Figure, s series, before, after *Page, model string) Figure {
	metric := out.Metric
	out.Source = s.String()
	af := after.families[s.name]
	switch af.GetType() {
	case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM, dto.MetricType_SUMMARY:
	default:
		out.NA = fmt.Sprintf("%s is a %s, not a histogram", s.name, strings.ToLower(af.GetType().String()))
		return out
	}
	am, others := selected(af, s, f.modelLabel, model)
	if len(am) == 0 {
		out.NA = "the page has no " + s.String() + " series"
		if len(others) > 0 {
			out.NA += fmt.Sprintf(" for %s=%q (it has %s)", f.modelLabel, model, strings.Join(quoteAll(others), ", "))
		}
		return out
	}
	bm, _ := selected(before.families[s.name], s, f.modelLabel, model)
	d, ok := deltaOf(am, bm)
	if !ok {
		out.NA = s.String() + ": its series have different buckets; they cannot be added"
		return out
	}
	count, sum, les, cum := d.count, d.sum, d.les, d.cum
	if s.scale != 0 {
		sum *= s.scale
		for i := range les {
			les[i] *= s.scale // +Inf stays
		}
	}
	if count < 0 {
		out.NA = ErrRestarted
		return out
	}
	out.Count, out.Unit = &count, UnitRequests
	switch metric {
	case MetricITL:
		out.Unit = UnitIntervals // one observation per gap between tokens
	case MetricKVTransfer:
		out.Unit = UnitTransfers
	}
	if count == 0 {
		out.NA = "no request finished between the scrapes"
		if metric == MetricKVTransfer {
			out.NA = "no KV transfer between the scrapes: prefill ran where decode did"
		}
		return out
	}
	mean := sum / count
	out.Mean = &mean
	if af.GetType() == dto.MetricType_SUMMARY {
		out.Note = "the engine exports a summary: its quantiles cover its own window, not this one"
		return out
	}
	for _, q := range Quantiles {
		if qq, ok := bucketQuantile(q.Q, les, cum); ok {
			qq.Name = q.Name
			out.Quantiles = append(out.Quantiles, qq)
		}
	}
	return out
}

func quoteAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprintf("%q", x)
	}
	return out
}

// kvTransferFigure is the window's KV transfers, nil where the family has
// no such histogram, n/a where the page lacks it (no KV connector).
func (f family) kvTransferFigure(before, after *Page, model string) *Figure {
	if len(f.kvTransfer) == 0 {
		return nil
	}
	out := Figure{Metric: MetricKVTransfer, Note: "every transfer the engine made in the window, an aggregate: the engine's histograms give no request's own"}
	s, ok := pick(f.kvTransfer, before, after)
	if !ok {
		out.NA = "no disaggregated prefill: the page has no " + f.kvTransfer[0].name + " (no KV connector)"
		return &out
	}
	out = f.histogramFigure(out, s, before, after, model)
	return &out
}

func (f family) ratioFigure(r ratio, before, after *Page) Figure {
	out := Figure{Metric: r.metric, Source: r.num + " / " + r.den, Note: r.note}
	nb, na := counterSum(before.families[r.num]), counterSum(after.families[r.num])
	db, da := counterSum(before.families[r.den]), counterSum(after.families[r.den])
	if nb == nil || na == nil || db == nil || da == nil {
		out.NA = "the page has no " + r.num + " or " + r.den
		return out
	}
	num, den := *na-*nb, *da-*db
	if num < 0 || den < 0 {
		out.NA = ErrRestarted
		return out
	}
	out.Count, out.Unit = &den, UnitTokens
	if den == 0 {
		out.NA = "no token counted between the scrapes"
		return out
	}
	mean := num / den
	out.Mean = &mean
	return out
}

func counterSum(mf *dto.MetricFamily) *float64 {
	if mf == nil || len(mf.Metric) == 0 {
		return nil
	}
	var v float64
	for _, m := range mf.Metric {
		switch {
		case m.Counter != nil:
			v += m.Counter.GetValue()
		case m.Untyped != nil:
			v += m.Untyped.GetValue()
		case m.Gauge != nil:
			v += m.Gauge.GetValue()
		}
	}
	return &v
}

func (f family) gauge(g string, before, after *Page, model string, during []*Page) Gauge {
	out := Gauge{Metric: g}
	s, ok := pick(f.gauges[g], before, after)
	if !ok {
		if len(f.gauges[g]) == 0 {
			out.NA = "the engine exports no such gauge"
		} else {
			out.NA = "the page has no " + f.gauges[g][0].name
		}
		return out
	}
	out.Source = s.name
	pickFn := gaugeSum
	if f.maxGauge[g] {
		pickFn = gaugeMax
	}
	out.Before = pickFn(before.families[s.name], s, f.modelLabel, model)
	out.After = pickFn(after.families[s.name], s, f.modelLabel, model)
	var sum float64
	for _, p := range during {
		v := pickFn(p.families[s.name], s, f.modelLabel, model)
		if !p.OK() || v == nil {
			continue
		}
		if out.Samples == 0 {
			out.Min, out.Max = new(float64), new(float64)
			*out.Min, *out.Max = *v, *v
		}
		out.Samples++
		sum += *v
		*out.Min, *out.Max = min(*out.Min, *v), max(*out.Max, *v)
	}
	if out.Samples > 0 {
		mean := sum / float64(out.Samples)
		out.Mean = &mean
	}
	if out.Before == nil && out.After == nil && out.Samples == 0 {
		out.NA = "the page has no " + s.name + " series for this model"
	}
	return out
}

func gaugeValue(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	}
	return m.GetUntyped().GetValue()
}

// gaugeSum adds the series (requests over several engines add up).
func gaugeSum(mf *dto.MetricFamily, s series, modelLabel, model string) *float64 {
	ms, _ := selected(mf, s, modelLabel, model)
	if len(ms) == 0 {
		return nil
	}
	var v float64
	for _, m := range ms {
		v += gaugeValue(m)
	}
	return &v
}

// gaugeMax takes the fullest (a cache usage does not add up).
func gaugeMax(mf *dto.MetricFamily, s series, modelLabel, model string) *float64 {
	ms, _ := selected(mf, s, modelLabel, model)
	if len(ms) == 0 {
		return nil
	}
	v := math.Inf(-1)
	for _, m := range ms {
		v = max(v, gaugeValue(m))
	}
	return &v
}
