package collector

import (
	"math"
	"slices"
	"sort"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Native histograms: ~10% resolution (schema 3, factor 2^(1/8)), bounded
// bucket count. These are the HistogramOpts client_golang would be given;
// histogram below keeps its native buckets the way client_golang does, so
// a protobuf scrape reads what a prometheus.Histogram would have written.
const (
	nativeSchema      = 3 // the largest schema whose factor 2^(2^-schema) is at most 1.1
	nativeMinSchema   = -4
	nativeMaxBuckets  = 160
	nativeMinReset    = time.Hour
	nativeZeroThresh  = prometheus.DefNativeHistogramZeroThreshold
	nativeSchema3Size = 1 << nativeSchema
)

// nativeBounds3 are the schema-3 bucket boundaries within one power of two,
// as fractions in [0.5, 1): 2^(i/8 - 1), the decimals client_golang uses, so
// that a value on a boundary lands in the same bucket. Lower schemas take
// every 2nd, 4th, ... of them.
var nativeBounds3 = [nativeSchema3Size]float64{
	0.5, 0.5452538663326288, 0.5946035575013605, 0.6484197773255048,
	0.7071067811865475, 0.7711054127039704, 0.8408964152537144, 0.9170040432046711,
}

var nativeBoundsBySchema = func() [nativeSchema + 1][]float64 {
	var out [nativeSchema + 1][]float64
	for s := 1; s <= nativeSchema; s++ {
		step := 1 << (nativeSchema - s)
		for i := 0; i < nativeSchema3Size; i += step {
			out[s] = append(out[s], nativeBounds3[i])
		}
	}
	return out
}()

// nativeKey is the index of the native bucket holding |v| at schema:
// bucket k holds (2^((k-1)/2^schema), 2^(k/2^schema)]; ±Inf get the bucket
// after the one holding MaxFloat64.
func nativeKey(v float64, schema int32) int {
	inf := math.IsInf(v, 0)
	if inf {
		v = math.MaxFloat64
	}
	frac, exp := math.Frexp(math.Abs(v))
	var key int
	if schema > 0 {
		bounds := nativeBoundsBySchema[schema]
		key = sort.SearchFloat64s(bounds, frac) + (exp-1)*len(bounds)
	} else {
		// A power of two is the upper bound of its bucket.
		key = exp
		if frac == 0.5 {
			key--
		}
		shift := -schema
		key = (key + 1<<shift - 1) >> shift
	}
	if inf {
		key++
	}
	return key
}

// histogram is one series of a probe histogram: classic buckets at its
// family's boundaries and native buckets. The series' lock guards it.
type histogram struct {
	counts []uint64 // classic, per bucket (not cumulative); the last is +Inf
	count  uint64
	sum    float64

	schema    int32
	zeroCount uint64
	pos, neg  map[int]int64
	// created is the last reset (client_golang's created timestamp).
	created time.Time
	// resetDue is when a histogram whose resolution was lowered goes back
	// to full resolution by a reset; zero when none is due.
	resetDue time.Time
	// ex is the last observation with an id of each classic bucket, +Inf
	// last; nil until one comes. Like client_golang's, a reset keeps them.
	ex []exemplar
}

// exemplarLabel names an exemplar's id: the probe's request id, which is
// also the trace id of the request's traceparent (Grafana's usual name).
const exemplarLabel = "trace_id"

// exemplar is an observation that carried a request id, as
// client_golang's ObserveWithExemplar keeps it: the latest per bucket.
type exemplar struct {
	id string
	v  float64
	at int64 // Unix nanoseconds
}

// exemplarID is id if it can be an exemplar's label value (client_golang
// would panic on it otherwise: UTF-8, at most 128 runes with the label's
// name), else "": the observation is counted without an exemplar.
func exemplarID(id string) string {
	if len(id) > prometheus.ExemplarMaxRunes-len(exemplarLabel) || !utf8.ValidString(id) {
		return ""
	}
	return id
}

func newHistogram(bounds []float64, now time.Time) *histogram {
	return &histogram{counts: make([]uint64, len(bounds)+1), schema: nativeSchema,
		pos: map[int]int64{}, neg: map[int]int64{}, created: now}
}

// due applies a reset that came due; every access calls it first.
func (h *histogram) due(now time.Time) {
	if !h.resetDue.IsZero() && !now.Before(h.resetDue) {
		h.reset(h.resetDue)
	}
}

func (h *histogram) reset(at time.Time) {
	clear(h.counts)
	h.count, h.sum, h.zeroCount = 0, 0, 0
	h.schema = nativeSchema
	clear(h.pos)
	clear(h.neg)
	h.created, h.resetDue = at, time.Time{}
}

// observe counts v; a non-empty id (checked by exemplarID) becomes its
// bucket's exemplar.
func (h *histogram) observe(v float64, bounds []float64, now time.Time, id string) {
	h.due(now)
	i := h.add(v, bounds)
	if id != "" {
		if h.ex == nil {
			h.ex = make([]exemplar, len(h.counts))
		}
		h.ex[i] = exemplar{id: id, v: v, at: now.UnixNano()}
	}
	if len(h.pos)+len(h.neg) <= nativeMaxBuckets {
		return
	}
	// Too many native buckets: start again if the last reset is an hour
	// old, keeping this observation; else halve the resolution until an
	// hour after the last reset.
	if h.resetDue.IsZero() && now.Sub(h.created) >= nativeMinReset {
		h.reset(now)
		h.add(v, bounds)
		return
	}
	if h.resetDue.IsZero() {
		h.resetDue = h.created.Add(nativeMinReset)
	}
	h.halveResolution()
}

// add counts v and returns its classic bucket.
func (h *histogram) add(v float64, bounds []float64) int {
	i := sort.SearchFloat64s(bounds, v)
	h.counts[i]++
	h.sum += v
	h.count++
	if math.IsNaN(v) {
		return i
	}
	switch {
	case v > nativeZeroThresh:
		h.pos[nativeKey(v, h.schema)]++
	case v < -nativeZeroThresh:
		h.neg[nativeKey(v, h.schema)]++
	default:
		h.zeroCount++
	}
	return i
}

func (h *histogram) halveResolution() {
	if h.schema == nativeMinSchema {
		return
	}
	h.schema--
	merge := func(m map[int]int64) map[int]int64 {
		out := make(map[int]int64, len(m))
		for k, n := range m {
			// Bucket k at the finer schema lies in bucket ceil(k/2).
			out[(k+1)>>1] += n
		}
		return out
	}
	h.pos, h.neg = merge(h.pos), merge(h.neg)
}

// dto is the histogram as client_golang's would write it: cumulative
// classic buckets without +Inf (unless +Inf has an exemplar) and their
// exemplars, then the native part. Native histograms carry no exemplars
// of their own: Prometheus then reads the classic buckets' ones, which
// have timestamps, for the native histogram too.
func (h *histogram) dto(bounds []float64) *dto.Histogram {
	n := len(bounds)
	if h.ex != nil && h.ex[n].id != "" {
		n++
	}
	buckets := make([]dto.Bucket, n)
	ptrs := make([]*dto.Bucket, n)
	cumulative := make([]uint64, n)
	var cum uint64
	for i := range n {
		cum += h.counts[i]
		cumulative[i] = cum
		buckets[i].CumulativeCount = &cumulative[i]
		if i < len(bounds) {
			buckets[i].UpperBound = &bounds[i]
		} else {
			cumulative[i] = h.count
			buckets[i].UpperBound = proto.Float64(math.Inf(1))
		}
		ptrs[i] = &buckets[i]
	}
	h.exemplarsDTO(buckets)
	count, sum, schema, zeroCount, zero := h.count, h.sum, h.schema, h.zeroCount, float64(nativeZeroThresh)
	hist := &dto.Histogram{
		SampleCount: &count, SampleSum: &sum, Bucket: ptrs, CreatedTimestamp: timestamppb.New(h.created),
		Schema: &schema, ZeroThreshold: &zero, ZeroCount: &zeroCount,
	}
	hist.NegativeSpan, hist.NegativeDelta = nativeSpans(h.neg)
	hist.PositiveSpan, hist.PositiveDelta = nativeSpans(h.pos)
	return hist
}

// exemplarName is the exemplars' label name, shared by every dto: it is
// only read.
var exemplarName = exemplarLabel

// exemplarsDTO gives buckets their exemplars, copied (the dto outlives the
// lock), in a few allocations for all of them.
func (h *histogram) exemplarsDTO(buckets []dto.Bucket) {
	if h.ex == nil {
		return
	}
	k := 0
	for i := range buckets {
		if h.ex[i].id != "" {
			k++
		}
	}
	exs := make([]dto.Exemplar, k)
	pairs := make([]dto.LabelPair, k)
	pairPtrs := make([]*dto.LabelPair, k)
	ids := make([]string, k)
	values := make([]float64, k)
	stamps := make([]timestamppb.Timestamp, k)
	j := 0
	for i := range buckets {
		e := &h.ex[i]
		if e.id == "" {
			continue
		}
		ids[j], values[j] = e.id, e.v
		stamps[j].Seconds, stamps[j].Nanos = e.at/1e9, int32(e.at%1e9)
		if e.at < 0 && stamps[j].Nanos != 0 {
			stamps[j].Seconds, stamps[j].Nanos = stamps[j].Seconds-1, stamps[j].Nanos+1e9
		}
		pairs[j].Name, pairs[j].Value = &exemplarName, &ids[j]
		pairPtrs[j] = &pairs[j]
		exs[j].Label, exs[j].Value, exs[j].Timestamp = pairPtrs[j:j+1:j+1], &values[j], &stamps[j]
		buckets[i].Exemplar = &exs[j]
		j++
	}
}

// nativeSpans encodes buckets as spans of consecutive indexes and deltas
// between neighbouring counts; gaps of one or two empty buckets stay
// inside a span, as client_golang writes them.
func nativeSpans(buckets map[int]int64) ([]*dto.BucketSpan, []int64) {
	if len(buckets) == 0 {
		return nil, nil
	}
	keys := make([]int, 0, len(buckets))
	for k := range buckets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var spans []*dto.BucketSpan
	deltas := make([]int64, 0, len(keys))
	var prev int64
	next := 0
	push := func(n int64) {
		*spans[len(spans)-1].Length++
		deltas = append(deltas, n-prev)
		prev = n
	}
	for i, k := range keys {
		gap := int32(k - next)
		if i == 0 || gap > 2 {
			offset, length := gap, uint32(0)
			spans = append(spans, &dto.BucketSpan{Offset: &offset, Length: &length})
		} else {
			for range gap {
				push(0)
			}
		}
		push(buckets[k])
		next = k + 1
	}
	return spans, deltas
}
