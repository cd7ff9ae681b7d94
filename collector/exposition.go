package collector

import (
	"compress/gzip"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// Exposition serves /metrics: a registry's metrics and the probe's. In the
// text formats (Prometheus text and OpenMetrics, what Prometheus scrapes
// unless it asks for native histograms) the probe's per-series families
// are written straight from their counts; building a dto.Metric for each
// of their lines and encoding it was most of a scrape's time. The rest,
// and every other format, go through client_golang as promhttp serves them.
// Both paths write the same lines (TestExpositionMatchesClientGolang).
type Exposition struct {
	probe *Probe
	// page keeps the last page's buffer for the next scrape: a large page
	// would otherwise be allocated, and grown by copying, on every scrape.
	page atomic.Pointer[textWriter]
	rest prometheus.Gatherer // the registry and the probe's configuration gauges
	full prometheus.Gatherer // the registry and the whole probe
	std  http.Handler
}

// NewExposition serves reg and p, as
// promhttp.HandlerFor(reg+p, {EnableOpenMetrics: true, ErrorHandling: ContinueOnError})
// would; p must not be registered in reg.
func NewExposition(reg prometheus.Gatherer, p *Probe) *Exposition {
	config, whole := prometheus.NewRegistry(), prometheus.NewRegistry()
	config.MustRegister(probeConfig{p})
	whole.MustRegister(p)
	full := prometheus.Gatherers{reg, whole}
	return &Exposition{
		probe: p,
		rest:  prometheus.Gatherers{reg, config},
		full:  full,
		std:   promhttp.HandlerFor(full, promhttp.HandlerOpts{EnableOpenMetrics: true, ErrorHandling: promhttp.ContinueOnError}),
	}
}

// Gather returns every metric, as a scrape in protobuf gets them.
func (e *Exposition) Gather() ([]*dto.MetricFamily, error) { return e.full.Gather() }

var gzipPool = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return w
}}

func (e *Exposition) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	format := expfmt.NegotiateAccept(r.Header, expfmt.DefaultOpenMetricsAcceptedFormats()...)
	om := format.FormatType() == expfmt.TypeOpenMetrics
	if (!om && format.FormatType() != expfmt.TypeTextPlain) || (r.URL != nil && r.URL.Query().Has("name[]")) {
		e.std.ServeHTTP(w, r)
		return
	}
	mfs, err := e.rest.Gather()
	if err != nil && len(mfs) == 0 {
		http.Error(w, "An error has occurred while serving metrics:\n\n"+err.Error(), http.StatusInternalServerError)
		return
	}
	// The page is rendered whole before a byte is sent: a slow scraper
	// must not hold the probe's lock.
	tw := e.page.Swap(nil)
	if tw == nil {
		tw = new(textWriter) // another scrape has the kept one
	}
	defer e.page.Store(tw)
	tw.b = tw.b[:0]
	enc := expfmt.NewEncoder(tw, format)
	now := e.probe.now()
	i := 0
	for _, f := range seriesFamilies {
		for ; i < len(mfs) && mfs[i].GetName() < f.name; i++ {
			_ = enc.Encode(mfs[i]) // as ContinueOnError: a family that fails is left out
		}
		e.probe.writeText(tw, f, om, now)
	}
	for ; i < len(mfs); i++ {
		_ = enc.Encode(mfs[i])
	}
	if c, ok := enc.(expfmt.Closer); ok {
		_ = c.Close() // OpenMetrics' # EOF
	}

	h := w.Header()
	h.Add("Vary", "Accept")
	h.Add("Vary", "Accept-Encoding")
	h.Set("Content-Type", string(format))
	if acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		gz := gzipPool.Get().(*gzip.Writer)
		defer gzipPool.Put(gz)
		gz.Reset(w)
		_, _ = gz.Write(tw.b)
		_ = gz.Close()
		return
	}
	_, _ = w.Write(tw.b)
}

// acceptsGzip reports whether promhttp, offering identity and gzip, would
// pick gzip: the first offer with the highest q that Accept-Encoding
// names, or matches with *.
func acceptsGzip(r *http.Request) bool {
	best, bestQ := "identity", -1.0
	for _, offer := range []string{"identity", "gzip"} {
		for _, h := range r.Header.Values("Accept-Encoding") {
			for spec := range strings.SplitSeq(h, ",") {
				value, params, _ := strings.Cut(spec, ";")
				value = strings.ToLower(strings.TrimSpace(value))
				q := 1.0
				for p := range strings.SplitSeq(params, ";") {
					if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(strings.TrimSpace(k), "q") {
						if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
							q = f
						}
					}
				}
				if q > bestQ && (value == "*" || value == offer) {
					best, bestQ = offer, q
				}
			}
		}
	}
	return best == "gzip" && bestQ != 0
}

// textWriter collects a page; expfmt writes into it too.
type textWriter struct{ b []byte }

func (t *textWriter) Write(p []byte) (int, error)       { t.b = append(t.b, p...); return len(p), nil }
func (t *textWriter) WriteString(s string) (int, error) { t.b = append(t.b, s...); return len(s), nil }
func (t *textWriter) WriteByte(c byte) error            { t.b = append(t.b, c); return nil }
func (t *textWriter) WriteRune(r rune) (int, error) {
	n := len(t.b)
	t.b = utf8.AppendRune(t.b, r)
	return len(t.b) - n, nil
}

// writeText writes family f of every series, in the text format or in
// OpenMetrics, line for line as expfmt writes what Collect sends.
func (p *Probe) writeText(t *textWriter, f *seriesFamily, om bool, now time.Time) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	head := f.textHead
	if om {
		head = f.omHead
	}
	value := appendTextFloat
	if om {
		value = appendOMFloat
	}
	b := t.b
	begun := false
	begin := func() {
		if !begun {
			b = append(b, head...)
			begun = true
		}
	}
	line := func(name, suffix, labels string, v float64) {
		b = append(b, name...)
		b = append(b, suffix...)
		b = append(b, '{')
		b = append(b, labels...)
		b = append(b, "} "...)
		b = value(b, v)
		b = append(b, '\n')
	}
	for _, s := range p.order {
		s.mu.Lock()
		switch f.kind {
		case kindPlain:
			begin()
			line(f.name, "", s.labels, s.plain[f.index])
		case kindCells:
			for _, c := range s.cells[f.index] {
				begin()
				line(f.name, "", c.labels, c.v)
			}
		case kindHist:
			h := s.hists[f.index]
			if h == nil {
				break
			}
			h.due(now)
			begin()
			le := p.hist[f.index].textLE
			if om {
				le = p.hist[f.index].omLE
			}
			b = h.appendText(b, f.name, s.labels, le, om)
		case kindComponents, kindTurns:
			set, layout := &s.comps, &componentLayout
			if f.kind == kindTurns {
				set, layout = &s.turns, &p.hist[f.index]
			}
			le := layout.textLE
			if om {
				le = layout.omLE
			}
			for i, h := range set.hists {
				if h == nil {
					continue
				}
				h.due(now)
				begin()
				b = h.appendText(b, f.name, set.labels[i], le, om)
			}
		}
		s.mu.Unlock()
	}
	t.b = b
}

// appendText writes the histogram's _bucket, _sum and _count lines of
// one series, with labels (sorted, without le) and le its buckets' le
// values, +Inf last; in OpenMetrics each bucket with an exemplar has it.
// The caller holds the series' lock.
func (h *histogram) appendText(b []byte, name, labels string, le []string, om bool) []byte {
	value := appendTextFloat
	if om {
		value = appendOMFloat
	}
	count := func(n uint64) {
		if om || n < 1e6 {
			// Below a million, 'g' formatting is the plain integer.
			b = strconv.AppendUint(b, n, 10)
		} else {
			b = appendTextFloat(b, float64(n))
		}
	}
	var cum uint64
	for i, n := range h.counts {
		cum += n
		if i == len(h.counts)-1 {
			cum = h.count // +Inf is the sample count, as expfmt writes it
		}
		b = append(b, name...)
		b = append(b, "_bucket{"...)
		b = append(b, labels...)
		b = append(b, `,le="`...)
		b = append(b, le[i]...)
		b = append(b, `"} `...)
		count(cum)
		if om && h.ex != nil && h.ex[i].id != "" {
			e := &h.ex[i]
			b = append(b, " # {"+exemplarLabel+`="`...)
			if strings.ContainsAny(e.id, "\\\"\n") {
				b = append(b, valueEscaper.Replace(e.id)...)
			} else {
				b = append(b, e.id...)
			}
			b = append(b, `"} `...)
			b = appendOMFloat(b, e.v)
			b = append(b, ' ')
			b = appendOMFloat(b, float64(e.at)/1e9)
		}
		b = append(b, '\n')
	}
	b = append(b, name...)
	b = append(b, "_sum{"...)
	b = append(b, labels...)
	b = append(b, "} "...)
	b = value(b, h.sum)
	b = append(b, '\n')
	b = append(b, name...)
	b = append(b, "_count{"...)
	b = append(b, labels...)
	b = append(b, "} "...)
	count(h.count)
	return append(b, '\n')
}

// appendTextFloat formats a sample value as the text format does.
func appendTextFloat(b []byte, f float64) []byte {
	switch {
	case f == 1:
		return append(b, '1')
	case f == 0:
		return append(b, '0')
	case f == -1:
		return append(b, "-1"...)
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "+Inf"...)
	case math.IsInf(f, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

// appendOMFloat formats a sample value as OpenMetrics does: a float always
// has a dot or an exponent.
func appendOMFloat(b []byte, f float64) []byte {
	switch {
	case f == 1:
		return append(b, "1.0"...)
	case f == 0:
		return append(b, "0.0"...)
	case f == -1:
		return append(b, "-1.0"...)
	case math.IsNaN(f), math.IsInf(f, 0):
		return appendTextFloat(b, f)
	}
	n := len(b)
	b = strconv.AppendFloat(b, f, 'g', -1, 64)
	for _, c := range b[n:] {
		if c == '.' || c == 'e' {
			return b
		}
	}
	return append(b, '.', '0')
}
