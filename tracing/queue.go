package tracing

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// boundedQueue sits on both sides of the SDK's batch processor: as the
// provider's span processor it admits an ended span only while fewer than
// limit are held (queued or being exported), dropping and counting the
// rest without waiting; as the batch processor's exporter it counts what
// the collector took or refused and lets those spans go. The batch
// processor's own queue, as long as limit, then never fills, so no span is
// lost uncounted.
type boundedQueue struct {
	next     sdktrace.SpanProcessor // the batch processor, which exports to this queue
	exporter sdktrace.SpanExporter  // the OTLP exporter
	limit    int64
	held     atomic.Int64
	spans    *prometheus.CounterVec
	logger   log.Logger
	warned   atomic.Int64 // unix seconds of the last failure logged
}

func (q *boundedQueue) OnStart(parent context.Context, s sdktrace.ReadWriteSpan) {
	q.next.OnStart(parent, s)
}

func (q *boundedQueue) OnEnd(s sdktrace.ReadOnlySpan) {
	if q.held.Add(1) > q.limit {
		q.held.Add(-1)
		q.spans.WithLabelValues(SpanDropped).Inc()
		return
	}
	q.next.OnEnd(s)
}

func (q *boundedQueue) ForceFlush(ctx context.Context) error { return q.next.ForceFlush(ctx) }

// Shutdown flushes the batch processor, which then shuts the exporter down
// (exporterSide).
func (q *boundedQueue) Shutdown(ctx context.Context) error { return q.next.Shutdown(ctx) }

// export is the batch processor's export: the collector's answer is
// counted, and the spans leave the queue either way.
func (q *boundedQueue) export(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := q.exporter.ExportSpans(ctx, spans)
	q.held.Add(-int64(len(spans)))
	if err != nil {
		q.spans.WithLabelValues(SpanFailed).Add(float64(len(spans)))
		q.warnOnce(err, len(spans))
		return err
	}
	q.spans.WithLabelValues(SpanExported).Add(float64(len(spans)))
	return nil
}

// warnOnce logs a failed export at most once a minute: a collector that is
// down fails every batch.
func (q *boundedQueue) warnOnce(err error, n int) {
	now := time.Now().Unix()
	last := q.warned.Load()
	if now-last < 60 || !q.warned.CompareAndSwap(last, now) {
		return
	}
	level.Warn(q.logger).Log("msg", "spans could not be exported to the OTLP collector; llmprobe_tracing_spans_total{outcome=\"failed\"} counts them (logged once a minute)", "spans", n, "err", err)
}

// exporterSide is the queue as the batch processor's exporter.
type exporterSide struct{ q *boundedQueue }

func (x exporterSide) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	return x.q.export(ctx, spans)
}

func (x exporterSide) Shutdown(ctx context.Context) error { return x.q.exporter.Shutdown(ctx) }
