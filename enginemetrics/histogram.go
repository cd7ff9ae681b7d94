package enginemetrics

import (
	"math"
	"slices"
	"sort"

	dto "github.com/prometheus/client_model/go"
)

// Histograms between two pages: what their buckets counted in between,
// and a quantile placed within its bucket.

// histogramDelta is what a family's series counted between two pages:
// observations, their sum, and the cumulative count of each bucket (none
// for a summary).
type histogramDelta struct {
	count, sum float64
	les, cum   []float64
}

// deltaOf adds up the series after, less each one's value in before (a
// series absent there is new: it counted from 0); ok is false when the
// series' buckets differ, so they cannot be added.
func deltaOf(after, before []*dto.Metric) (d histogramDelta, ok bool) {
	prev := map[string]*dto.Metric{}
	for _, m := range before {
		prev[labelKey(m)] = m
	}
	for _, m := range after {
		p := prev[labelKey(m)]
		if m.Summary != nil {
			d.count += float64(m.Summary.GetSampleCount()) - float64(p.GetSummary().GetSampleCount())
			d.sum += m.Summary.GetSampleSum() - p.GetSummary().GetSampleSum()
			continue
		}
		h := m.GetHistogram()
		d.count += float64(h.GetSampleCount()) - float64(p.GetHistogram().GetSampleCount())
		d.sum += h.GetSampleSum() - p.GetHistogram().GetSampleSum()
		bl, bc := buckets(h)
		pl, pc := buckets(p.GetHistogram())
		if d.les == nil {
			d.les, d.cum = bl, make([]float64, len(bl))
		}
		if !slices.Equal(d.les, bl) {
			return d, false
		}
		for i, le := range bl {
			base := 0.0
			if j := slices.Index(pl, le); j >= 0 {
				base = pc[j]
			}
			d.cum[i] += bc[i] - base
		}
	}
	return d, true
}

// buckets returns a histogram's upper bounds and cumulative counts, +Inf
// last (added from the sample count where the page left it out).
func buckets(h *dto.Histogram) (les, cum []float64) {
	if h == nil {
		return nil, nil
	}
	for _, b := range h.Bucket {
		les = append(les, b.GetUpperBound())
		cum = append(cum, float64(b.GetCumulativeCount()))
	}
	if len(les) == 0 || !math.IsInf(les[len(les)-1], 1) {
		les = append(les, math.Inf(1))
		cum = append(cum, float64(h.GetSampleCount()))
	}
	return les, cum
}

// bucketQuantile estimates quantile q from cumulative bucket counts as
// Prometheus' histogram_quantile does: linear within the bucket the rank
// falls in, the first bucket starting at 0, and the upper bound of the last
// finite bucket when the rank falls in +Inf.
func bucketQuantile(q float64, les, cum []float64) (Quantile, bool) {
	n := len(les)
	if n < 2 {
		return Quantile{}, false // only +Inf: nothing to place the rank in
	}
	// Counts scraped a moment apart can tear: keep them monotonic.
	for i := 1; i < n; i++ {
		cum[i] = max(cum[i], cum[i-1])
	}
	total := cum[n-1]
	if total <= 0 {
		return Quantile{}, false
	}
	rank := q * total
	i := sort.Search(n, func(i int) bool { return cum[i] >= rank })
	if i == n-1 {
		return Quantile{Value: les[n-2], BucketLower: les[n-2]}, true
	}
	if i == 0 && les[0] <= 0 {
		up := les[0]
		return Quantile{Value: les[0], BucketLower: les[0], BucketUpper: &up}, true
	}
	lower, prev := 0.0, 0.0
	if i > 0 {
		lower, prev = les[i-1], cum[i-1]
	}
	upper := les[i]
	inBucket := cum[i] - prev
	v := upper
	if inBucket > 0 {
		v = lower + (upper-lower)*(rank-prev)/inBucket
	}
	return Quantile{Value: v, BucketLower: lower, BucketUpper: &upper}, true
}
