// Package tracing exports one OpenTelemetry client span per measured
// request over OTLP/HTTP, under the trace and span ids its traceparent
// carried, so the engine's own spans join it.
package tracing

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/url"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	promconfig "github.com/prometheus/common/config"
	"github.com/prometheus/common/version"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
)

// Exporter turns results into spans. It is a prober.Sampler (clients ask it
// whether a request's span will be exported before sending it) and a
// prober.Observer (it is told every finished request). Without a tracing
// block it exports nothing and every request says sampled, as before.
type Exporter struct {
	logger log.Logger
	spans  *prometheus.CounterVec
	held   prometheus.GaugeFunc

	cur atomic.Pointer[pipeline] // nil: tracing is off

	mu      sync.Mutex // Configure
	applied *config.Tracing
}

// Span outcomes of llmprobe_tracing_spans_total.
const (
	SpanExported = "exported"
	SpanFailed   = "failed"  // the collector refused them or could not be reached
	SpanDropped  = "dropped" // the queue was full: never waited for
)

// New returns an exporter with tracing off; Configure turns it on.
func New(logger log.Logger) *Exporter {
	e := &Exporter{logger: logger,
		spans: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llmprobe_tracing_spans_total",
			Help: "Request spans by what became of them: exported to the OTLP collector, failed (refused or unreachable), or dropped because the queue was full.",
		}, []string{"outcome"}),
	}
	for _, o := range []string{SpanExported, SpanFailed, SpanDropped} {
		e.spans.WithLabelValues(o)
	}
	e.held = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "llmprobe_tracing_queue_spans",
		Help: "Spans waiting for, or in, an export to the OTLP collector; at tracing.queue_size new spans are dropped.",
	}, func() float64 {
		if p := e.cur.Load(); p != nil {
			return float64(p.queue.held.Load())
		}
		return 0
	})
	// The SDK's own errors are the failed exports this package counts and
	// logs itself; its default handler would print them unstructured.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		level.Debug(logger).Log("msg", "OpenTelemetry SDK error", "err", err)
	}))
	return e
}

// Describe and Collect make the exporter's counters a prometheus.Collector.
func (e *Exporter) Describe(ch chan<- *prometheus.Desc) {
	e.spans.Describe(ch)
	e.held.Describe(ch)
}

// Collect implements prometheus.Collector.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	e.spans.Collect(ch)
	e.held.Collect(ch)
}

// Configure follows cfg's tracing block: a changed block replaces the
// pipeline (the old one flushes in the background), nil turns tracing off.
// It also learns each target's API and address for the spans' attributes.
func (e *Exporter) Configure(cfg *config.Config) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	targets := targetsOf(cfg)
	if old := e.cur.Load(); old != nil && reflect.DeepEqual(e.applied, cfg.Tracing) {
		e.cur.Store(old.withTargets(targets))
		return nil
	}
	var next *pipeline
	if cfg.Tracing != nil {
		var err error
		if next, err = e.newPipeline(*cfg.Tracing, targets); err != nil {
			return err
		}
	}
	e.applied = cfg.Tracing
	if old := e.cur.Swap(next); old != nil {
		go old.shutdown(e.logger)
	}
	return nil
}

// Shutdown flushes the spans still queued, within ctx.
func (e *Exporter) Shutdown(ctx context.Context) error {
	if p := e.cur.Swap(nil); p != nil {
		return p.provider.Shutdown(ctx)
	}
	return nil
}

// Sampled decides whether the span of the request with this trace id is
// exported: deterministically from the id, as OpenTelemetry's ratio sampler
// does, so every replica agrees. Every request is sampled with tracing off.
func (e *Exporter) Sampled(traceID string) bool {
	p := e.cur.Load()
	if p == nil {
		return true
	}
	var id [16]byte
	if _, err := hex.Decode(id[:], []byte(traceID)); err != nil {
		return false
	}
	return binary.BigEndian.Uint64(id[8:])>>1 < p.threshold
}

// Observe exports the span of a sampled request.
func (e *Exporter) Observe(res *prober.Result) {
	if p := e.cur.Load(); p != nil {
		p.record(res)
	}
}

// pipeline is one tracing configuration's SDK provider, bounded queue and
// what it knows of the targets.
type pipeline struct {
	threshold uint64 // trace ids below it (ratio × 2^63) are sampled
	provider  *sdktrace.TracerProvider
	tracer    trace.Tracer
	queue     *boundedQueue
	targets   map[string]targetFacts
}

func (p *pipeline) withTargets(t map[string]targetFacts) *pipeline {
	q := *p
	q.targets = t
	return &q
}

func (e *Exporter) newPipeline(t config.Tracing, targets map[string]targetFacts) (*pipeline, error) {
	client, err := promconfig.NewClientFromConfig(t.HTTPClientConfig, "llmprobe_tracing")
	if err != nil {
		return nil, fmt.Errorf("tracing.http_client_config: %w", err)
	}
	client.Timeout = t.Timeout.Std()
	exp, err := otlptracehttp.New(context.Background(),
		otlptracehttp.WithEndpointURL(tracesURL(t.Endpoint)),
		otlptracehttp.WithHTTPClient(client),
		otlptracehttp.WithTimeout(t.Timeout.Std()),
		// A failed export is counted and the spans let go: a collector that
		// is down must not hold the queue with retries.
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}),
	)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	limit := int64(t.QueueSize)
	q := &boundedQueue{limit: limit, logger: e.logger, spans: e.spans}
	q.exporter = exp
	// Small batches often: each export's encoding is a short burst of CPU
	// beside the requests being timed, not one long one a second.
	bsp := sdktrace.NewBatchSpanProcessor(exporterSide{q},
		sdktrace.WithMaxQueueSize(t.QueueSize), sdktrace.WithMaxExportBatchSize(min(t.QueueSize, exportBatch)),
		sdktrace.WithBatchTimeout(exportEvery), sdktrace.WithExportTimeout(t.Timeout.Std()))
	q.next = bsp
	provider := sdktrace.NewTracerProvider(
		sdktrace.WithSpanProcessor(q),
		sdktrace.WithSampler(sdktrace.AlwaysSample()), // Sampled decided it already
		sdktrace.WithIDGenerator(requestIDs{}),
		sdktrace.WithResource(resource.NewWithAttributes(semconv.SchemaURL,
			semconv.ServiceName("llmprobe"), semconv.ServiceVersion(version.Version))),
	)
	ratio := t.SamplingRatio()
	return &pipeline{
		threshold: uint64(ratio * (1 << 63)),
		provider:  provider,
		tracer:    provider.Tracer("github.com/llmprobe/llmprobe/tracing", trace.WithSchemaURL(semconv.SchemaURL)),
		queue:     q,
		targets:   targets,
	}, nil
}

// A batch goes to the collector when it holds exportBatch spans or
// exportEvery after its first.
const (
	exportBatch = 128
	exportEvery = 200 * time.Millisecond
)

// tracesURL is the collector URL with OTLP's traces path when it has none.
func tracesURL(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return endpoint
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	return u.String()
}

func (p *pipeline) shutdown(logger log.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.provider.Shutdown(ctx); err != nil {
		level.Warn(logger).Log("msg", "the replaced tracing pipeline did not flush its spans", "err", err)
	}
}

// requestIDs gives a span the ids its request's traceparent carried (ctx).
type requestIDs struct{}

type idsKey struct{}

type spanIDs struct {
	trace trace.TraceID
	span  trace.SpanID
}

func (requestIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	ids, _ := ctx.Value(idsKey{}).(spanIDs)
	return ids.trace, ids.span
}

func (requestIDs) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	ids, _ := ctx.Value(idsKey{}).(spanIDs)
	return ids.span
}

// Counts are the spans exported, failed and dropped so far.
type Counts struct{ Exported, Failed, Dropped int }

// Counts says what became of the spans so far (a gate prints it at its end).
func (e *Exporter) Counts() Counts {
	get := func(o string) int {
		var m dto.Metric
		_ = e.spans.WithLabelValues(o).Write(&m)
		return int(m.GetCounter().GetValue())
	}
	return Counts{Exported: get(SpanExported), Failed: get(SpanFailed), Dropped: get(SpanDropped)}
}

// On reports whether a tracing block is in effect.
func (e *Exporter) On() bool { return e.cur.Load() != nil }
