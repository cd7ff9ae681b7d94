package tracing

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmprobe/llmprobe/config"
	"github.com/llmprobe/llmprobe/prober"
	"github.com/llmprobe/llmprobe/prober/transport"
)

// targetFacts are what a span says of its target beyond the result.
type targetFacts struct {
	operation attribute.KeyValue // gen_ai.operation.name
	provider  attribute.KeyValue // gen_ai.provider.name: the API's flavour
	address   string             // server.address
	port      int                // server.port, 0 when unknown
}

func targetsOf(cfg *config.Config) map[string]targetFacts {
	out := make(map[string]targetFacts, len(cfg.Targets))
	for _, t := range cfg.Targets {
		f := targetFacts{operation: operationOf(t.API), provider: providerOf(t.API)}
		if u, err := url.Parse(t.URL); err == nil {
			f.address = u.Hostname()
			f.port, _ = strconv.Atoi(u.Port())
			if f.port == 0 && u.Scheme == "https" {
				f.port = 443
			} else if f.port == 0 {
				f.port = 80
			}
		}
		out[t.Name] = f
	}
	return out
}

// operationOf names a target API's operation as the GenAI conventions do;
// rerank and transcriptions have no well-known name, so each names itself.
func operationOf(api config.API) attribute.KeyValue {
	switch api {
	case config.APICompletions:
		return semconv.GenAIOperationNameTextCompletion
	case config.APIEmbeddings:
		return semconv.GenAIOperationNameEmbeddings
	case config.APIChat, config.APIResponses, config.APIMessages:
		return semconv.GenAIOperationNameChat
	}
	return semconv.GenAIOperationNameKey.String(string(api))
}

// providerOf names the telemetry flavour of the API spoken, as the
// conventions ask: Anthropic's for its Messages API, else OpenAI's; the
// engine itself is named by server.address and the models.
func providerOf(api config.API) attribute.KeyValue {
	if api == config.APIMessages {
		return semconv.GenAIProviderNameAnthropic
	}
	return semconv.GenAIProviderNameOpenAI
}

// record exports res's span when its traceparent said sampled: a client
// span from when the request was due to its last byte, named as the GenAI
// conventions say ("chat model"), with the request's phases as events.
func (p *pipeline) record(res *prober.Result) {
	traceID, spanID, sampled, ok := transport.ParseTraceParent(res.TraceParent)
	if !ok || !sampled {
		return
	}
	facts, known := p.targets[res.Target]
	if !known {
		facts = targetFacts{operation: operationOf(config.APIChat), provider: providerOf(config.APIChat)}
	}
	start := res.Sched
	end := start.Add(max(res.E2E, res.Timings.TTFB, res.DispatchDelay))
	ctx := context.WithValue(context.Background(), idsKey{}, spanIDs{trace: traceID, span: spanID})
	name := facts.operation.Value.AsString()
	if res.Model != "" {
		name += " " + res.Model
	}
	_, span := p.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(start),
		trace.WithAttributes(attributes(res, facts)...))
	for _, ev := range phases(res) {
		if ev.took > 0 {
			span.AddEvent(ev.name, trace.WithTimestamp(ev.at), trace.WithAttributes(attribute.Float64("llmprobe.duration_seconds", ev.took.Seconds())))
		} else {
			span.AddEvent(ev.name, trace.WithTimestamp(ev.at))
		}
	}
	if res.Outcome != prober.OutcomeSuccess {
		span.SetAttributes(semconv.ErrorTypeKey.String(res.Reason))
		span.SetStatus(codes.Error, res.FailureText())
	}
	span.End(trace.WithTimestamp(end))
}

// attributes are the GenAI conventions' attributes of res, then
// llmprobe's own: where the request came from and what it measured.
func attributes(res *prober.Result, f targetFacts) []attribute.KeyValue {
	a := make([]attribute.KeyValue, 0, 20)
	a = append(a, f.operation, f.provider)
	if res.Model != "" {
		a = append(a, semconv.GenAIRequestModel(res.Model))
	}
	if res.ResponseModel != "" {
		a = append(a, semconv.GenAIResponseModel(res.ResponseModel))
	}
	if res.PromptTokensReported > 0 {
		a = append(a, semconv.GenAIUsageInputTokens(res.PromptTokensReported))
	}
	if res.OutputTokens > 0 {
		a = append(a, semconv.GenAIUsageOutputTokens(res.OutputTokens))
	}
	if res.FinishReason != "" {
		a = append(a, semconv.GenAIResponseFinishReasons(res.FinishReason))
	}
	if f.address != "" {
		a = append(a, semconv.ServerAddress(f.address))
	}
	if f.port > 0 {
		a = append(a, semconv.ServerPort(f.port))
	}
	if res.HTTPStatus > 0 {
		a = append(a, semconv.HTTPResponseStatusCode(res.HTTPStatus))
	}
	a = append(a,
		attribute.String("llmprobe.target", res.Target),
		attribute.String("llmprobe.scenario", res.Scenario),
		attribute.String("llmprobe.traffic", res.Traffic),
		attribute.String("llmprobe.request_id", res.RequestID),
		attribute.String("llmprobe.outcome", string(res.Outcome)),
		attribute.Bool("llmprobe.good", res.Good),
	)
	if res.TokenSource != "" {
		a = append(a, attribute.String("llmprobe.token_source", string(res.TokenSource)))
	}
	return a
}

// phaseEvent is one step of a request at the moment it ended; a network
// phase carries its length, which its moment alone does not say.
type phaseEvent struct {
	name string
	at   time.Time
	took time.Duration // 0 for a moment
}

// phases are the request's steps as events at the moment each ended:
// DNS, connect and TLS one after another from when the request was sent
// (httptrace gives their lengths), then the request written, the first
// byte, the first and the last token. A step that did not happen (a reused
// connection's dial) has no event.
func phases(res *prober.Result) []phaseEvent {
	out := make([]phaseEvent, 0, 7)
	t := res.Timings
	at := res.Sched.Add(res.DispatchDelay)
	for _, ph := range []struct {
		name string
		took time.Duration
	}{{"dns", t.DNS}, {"connect", t.Connect}, {"tls", t.TLS}} {
		if ph.took > 0 {
			at = at.Add(ph.took)
			out = append(out, phaseEvent{ph.name, at, ph.took})
		}
	}
	if t.Wrote > 0 {
		out = append(out, phaseEvent{"request_sent", res.Sched.Add(t.Wrote), 0})
	}
	if t.TTFB > 0 {
		out = append(out, phaseEvent{"first_byte", res.Sched.Add(t.TTFB), 0})
	}
	if res.FirstTokenSeen() && !res.Unstreamed {
		out = append(out, phaseEvent{"first_token", res.Sched.Add(res.TTFT), 0})
		out = append(out, phaseEvent{"last_token", res.Sched.Add(res.E2E), 0})
	}
	return out
}
