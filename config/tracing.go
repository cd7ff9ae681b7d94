package config

import (
	"time"

	promconfig "github.com/prometheus/common/config"
)

// Tracing exports one OpenTelemetry span per probe and burst request over
// OTLP/HTTP, under the trace id of the request's traceparent.
type Tracing struct {
	// Endpoint is the collector's OTLP/HTTP traces URL
	// (http://otel-collector:4318/v1/traces); a URL without a path gets
	// /v1/traces.
	Endpoint string `yaml:"endpoint"`
	// Sampling is the share of requests whose span is exported, decided from
	// the trace id before the request is sent: its traceparent says sampled
	// exactly when its span is exported.
	Sampling *float64 `yaml:"sampling,omitempty"`
	// QueueSize bounds the spans held while the collector is slow or down;
	// past it spans are dropped and counted, never waited for.
	QueueSize int `yaml:"queue_size,omitempty"`
	// Timeout bounds one export to the collector.
	Timeout Duration `yaml:"timeout,omitempty"`
	// HTTPClientConfig holds TLS, authorization and http_headers (values,
	// secrets or files, read for each export) of the requests to the
	// collector.
	HTTPClientConfig promconfig.HTTPClientConfig `yaml:"http_client_config,omitempty"`
}

// DefaultTracing fills the fields a tracing block leaves out.
var DefaultTracing = Tracing{QueueSize: 2048, Timeout: Duration(10 * time.Second), HTTPClientConfig: promconfig.DefaultHTTPClientConfig}

// UnmarshalYAML applies defaults.
func (t *Tracing) UnmarshalYAML(unmarshal func(any) error) error {
	*t = DefaultTracing
	type plain Tracing
	return unmarshal((*plain)(t))
}

// SamplingRatio is the share of requests traced: 1 unless set.
func (t *Tracing) SamplingRatio() float64 {
	if t.Sampling == nil {
		return 1
	}
	return *t.Sampling
}

func (t *Tracing) validate(errs *FieldErrors) {
	const path = "tracing"
	if t.Endpoint == "" {
		errs.Add(path+".endpoint", "is required: the collector's OTLP/HTTP URL, like http://otel-collector:4318/v1/traces")
	} else if msg := urlProblem(t.Endpoint); msg != "" {
		errs.Add(path+".endpoint", "%s", msg)
	}
	if t.Sampling != nil {
		errs.Within(path+".sampling", *t.Sampling, 0, 1, "")
	}
	errs.IntWithin(path+".queue_size", t.QueueSize, 1, 1000000, "spans")
	errs.DurationWithin(path+".timeout", t.Timeout, 100*time.Millisecond, 5*time.Minute, false)
	if err := t.HTTPClientConfig.Validate(); err != nil {
		errs.Add(path+".http_client_config", "%v", err)
	}
}
