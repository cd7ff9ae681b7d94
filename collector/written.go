package collector

import (
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// written keeps each histogram series' last protobuf: client_golang builds
// it anew on every Write, walking the native buckets twice, and that was
// half of gathering the page; a series changes only when it observes.
type written struct {
	mu     sync.Mutex
	series map[any]*writtenSeries // by the series' histogram
}

// writtenSeries is one series' observation count and its protobuf as of
// count at.
type writtenSeries struct {
	observed atomic.Uint64

	mu sync.Mutex
	at uint64
	m  *dto.Metric
}

func (w *written) of(h any) *writtenSeries {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.series == nil {
		w.series = map[any]*writtenSeries{}
	}
	s := w.series[h]
	if s == nil {
		s = &writtenSeries{}
		w.series[h] = s
	}
	return s
}

// observed marks h's protobuf stale; called after h observed.
func (w *written) observed(h prometheus.Observer) { w.of(h).observed.Add(1) }

// reset forgets every series, so that deleted ones are not kept.
func (w *written) reset() {
	w.mu.Lock()
	w.series = nil
	w.mu.Unlock()
}

// collect sends v's series, each writing its protobuf only if it observed
// since the last write.
func (w *written) collect(v *prometheus.HistogramVec, ch chan<- prometheus.Metric) {
	in := make(chan prometheus.Metric, 64)
	go func() {
		v.Collect(in)
		close(in)
	}()
	for m := range in {
		ch <- cachedHistogram{m, w.of(m)}
	}
}

type cachedHistogram struct {
	prometheus.Metric
	s *writtenSeries
}

func (c cachedHistogram) Write(out *dto.Metric) error {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	// Read before writing: an observation during the write leaves the
	// protobuf stale for the next scrape, never fresh for ever.
	at := c.s.observed.Load()
	if c.s.m == nil || c.s.at != at {
		m := &dto.Metric{}
		if err := c.Metric.Write(m); err != nil {
			return err
		}
		c.s.m, c.s.at = m, at
	}
	// Shared between scrapes: the registry and the encoders only read it.
	out.Label, out.Histogram, out.TimestampMs = c.s.m.Label, c.s.m.Histogram, c.s.m.TimestampMs
	return nil
}
