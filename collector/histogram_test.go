package collector

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"
)

// clientGolangHistogram is the prometheus.Histogram the probe histograms
// stand in for. Its native histogram keeps no exemplars of its own: ours
// leave them to the classic buckets (histogram.dto says why).
func clientGolangHistogram(bounds []float64) prometheus.Histogram {
	return prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "h", Help: "h", Buckets: bounds,
		NativeHistogramBucketFactor: 1.1, NativeHistogramMaxBucketNumber: nativeMaxBuckets, NativeHistogramMinResetDuration: nativeMinReset,
		NativeHistogramMaxExemplars: -1,
	})
}

// A protobuf scrape reads from histogram what client_golang's histogram
// would have written for the same observations: classic buckets, count,
// sum, and native buckets through every lowering of the resolution.
func TestHistogramWritesWhatClientGolangWrites(t *testing.T) {
	bounds := layoutFor(nil).ttft
	rng := rand.New(rand.NewPCG(7, 11))
	now := time.Unix(1_700_000_000, 0)
	ours, theirs := newHistogram(bounds, now), clientGolangHistogram(bounds)
	// An observation with an id gives its bucket an exemplar, as
	// ObserveWithExemplar does; n%every == 0 say which ones have one.
	n, every := 0, 1
	observe := func(v float64) {
		n++
		if n%every != 0 {
			ours.observe(v, bounds, now, "")
			theirs.Observe(v)
			return
		}
		id := fmt.Sprintf("%032x", n)
		ours.observe(v, bounds, now, id)
		theirs.(prometheus.ExemplarObserver).ObserveWithExemplar(v, prometheus.Labels{exemplarLabel: id})
	}
	compare := func(step string) {
		t.Helper()
		var want dto.Metric
		if err := theirs.Write(&want); err != nil {
			t.Fatal(err)
		}
		got := ours.dto(bounds)
		got.CreatedTimestamp, want.Histogram.CreatedTimestamp = nil, nil
		// client_golang stamps exemplars with its own clock, which a test
		// cannot set: the stamps must be ours, then are compared no more.
		if len(got.Bucket) == len(want.Histogram.Bucket) {
			for i, b := range got.Bucket {
				w := want.Histogram.Bucket[i]
				if (b.Exemplar == nil) != (w.Exemplar == nil) {
					continue // proto.Equal below says which
				}
				if b.Exemplar != nil {
					if !b.Exemplar.Timestamp.AsTime().Equal(now) {
						t.Fatalf("%s: bucket %d's exemplar is stamped %v, want the observation's time %v", step, i, b.Exemplar.Timestamp.AsTime(), now)
					}
					b.Exemplar.Timestamp, w.Exemplar.Timestamp = nil, nil
				}
			}
		}
		if !proto.Equal(got, want.Histogram) {
			t.Fatalf("%s: histogram differs from client_golang's\n got: %v\nwant: %v", step, got, want.Histogram)
		}
	}
	compare("empty")
	// Boundaries: classic ones, native ones (powers of two and schema-3
	// steps), zero, below the zero threshold, negative, infinite.
	for _, v := range append(bounds, 0, 1, 2, 0.5, 0.25, 1024, nativeBounds3[3], 2*nativeBounds3[5], 1e-40, -1e-40, -0.3, -2, math.Inf(1), math.Inf(-1)) {
		observe(v)
	}
	compare("boundaries")
	if ours.ex == nil || ours.ex[len(bounds)].id == "" || ours.ex[0].id == "" {
		t.Fatal("the test put no exemplar on the first or the +Inf bucket")
	}
	every = 3
	// Latencies over ten decades: more native buckets than allowed, so the
	// resolution is lowered again and again.
	for i := range 20000 {
		observe(math.Exp(rng.NormFloat64()*5) * 0.1)
		if i%1000 == 0 {
			compare("lognormal")
		}
	}
	compare("lognormal")
	if ours.schema >= nativeSchema {
		t.Errorf("schema %d: the test never lowered the resolution", ours.schema)
	}
}

// A lowered resolution goes back to full an hour after the last reset; an
// hour after it, too many buckets reset the histogram at once, keeping the
// observation that overflowed it (client_golang's reset rules, on a clock
// the test sets).
func TestHistogramResets(t *testing.T) {
	bounds := []float64{1}
	start := time.Unix(1_700_000_000, 0)
	h := newHistogram(bounds, start)
	spread := func(at time.Time, n int) {
		for i := range n {
			h.observe(math.Pow(1.1, float64(i)), bounds, at, "")
		}
	}
	spread(start, nativeMaxBuckets+10)
	if h.schema != nativeSchema-1 || !h.resetDue.Equal(start.Add(nativeMinReset)) {
		t.Fatalf("after overflowing: schema %d, reset due %v; want %d and %v", h.schema, h.resetDue, nativeSchema-1, start.Add(nativeMinReset))
	}
	// A scrape just before the hour still sees the counts.
	before := start.Add(nativeMinReset - time.Second)
	if got := h.dto(bounds); got.GetSampleCount() != nativeMaxBuckets+10 {
		t.Fatalf("count before the reset = %d", got.GetSampleCount())
	}
	h.due(before)
	if h.count != nativeMaxBuckets+10 {
		t.Fatalf("reset early: count %d at %v", h.count, before)
	}
	// At the hour it starts again at full resolution.
	h.due(start.Add(nativeMinReset))
	if h.count != 0 || h.schema != nativeSchema || !h.created.Equal(start.Add(nativeMinReset)) || !h.resetDue.IsZero() {
		t.Fatalf("after the due reset: count %d schema %d created %v due %v", h.count, h.schema, h.created, h.resetDue)
	}

	// Two hours later, overflowing resets at once and keeps the last value.
	later := start.Add(3 * nativeMinReset)
	spread(later, nativeMaxBuckets+1)
	if h.count != 1 || h.schema != nativeSchema || !h.created.Equal(later) || !h.resetDue.IsZero() {
		t.Fatalf("after overflowing an hour on: count %d schema %d created %v due %v, want 1, %d, %v, none", h.count, h.schema, h.created, h.resetDue, nativeSchema, later)
	}
	if want := math.Pow(1.1, nativeMaxBuckets); h.sum != want {
		t.Errorf("sum %g, want the overflowing observation %g", h.sum, want)
	}
}
