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
// since the last write. The write happens here, in the collector's
// goroutine: the registry processes every metric of the page in one
// goroutine, so it overlaps with that rather than adding to it.
func (w *written) collect(v *prometheus.HistogramVec, ch chan<- prometheus.Metric) {
	in := make(chan prometheus.Metric, 64)
	go func() {
		v.Collect(in)
		close(in)
	}()
	for m := range in {
		s := w.of(m)
		_, _ = s.write(m) // an error is the registry's to report, from Write
		ch <- cachedHistogram{m, s}
	}
}

type cachedHistogram struct {
	prometheus.Metric
	s *writtenSeries
}

func (c cachedHistogram) Write(out *dto.Metric) error {
	m, err := c.s.write(c.Metric)
	if err != nil {
		return err
	}
	// Shared between scrapes: the registry and the encoders only read it.
	out.Label, out.Histogram, out.TimestampMs = m.Label, m.Histogram, m.TimestampMs
	return nil
}

// write returns h's protobuf, written anew if h observed since the last.
func (s *writtenSeries) write(h prometheus.Metric) (*dto.Metric, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Read before writing: an observation during the write leaves the
	// protobuf stale for the next scrape, never fresh for ever.
	at := s.observed.Load()
	if s.m == nil || s.at != at {
		m := &dto.Metric{}
		if err := h.Write(m); err != nil {
			return nil, err
		}
		s.m, s.at = m, at
	}
	return s.m, nil
}
