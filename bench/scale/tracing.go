package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/go-kit/log"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/tracing"
)

// tracer, with -tracing, exports every request's span to an OTLP sink in
// this process, so the table shows what tracing costs the timing.
var tracer *tracing.Exporter

// startTracing turns tracing on at sampling 1 towards a sink that reads
// and discards each export.
func startTracing() (stop func(), err error) {
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	tr := config.DefaultTracing
	tr.Endpoint = sink.URL
	tracer = tracing.New(log.NewNopLogger())
	if err := tracer.Configure(&config.Config{Tracing: &tr}); err != nil {
		sink.Close()
		return nil, err
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = tracer.Shutdown(ctx)
		n := tracer.Counts()
		fmt.Fprintf(os.Stderr, "spans: %d exported, %d failed, %d dropped\n", n.Exported, n.Failed, n.Dropped)
		sink.Close()
	}, nil
}

// clientOptions are the options of every client the bench builds.
func clientOptions() []prober.Option {
	if tracer == nil {
		return nil
	}
	return []prober.Option{prober.WithSampler(tracer)}
}
