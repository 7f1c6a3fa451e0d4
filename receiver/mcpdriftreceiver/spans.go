package mcpdriftreceiver

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
	nooptrace "go.opentelemetry.io/otel/trace/noop"

	"github.com/mcpdrift/mcpdrift/internal/mcpwire/serverid"
	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// clientTelemetry is the telemetry a target's HTTP client is built with.
// confighttp instruments the client with otelhttp, whose spans record
// url.full with the query (an API key) and transport errors that quote the
// request URL: its spans go through the target's redactor.
func clientTelemetry(set component.TelemetrySettings, red *probe.Redactor) component.TelemetrySettings {
	switch set.TracerProvider.(type) {
	case nil, nooptrace.TracerProvider: // no span is recorded: nothing to redact
	default:
		set.TracerProvider = redactingTracerProvider{tp: set.TracerProvider, red: red}
	}
	return set
}

type redactingTracerProvider struct {
	embedded.TracerProvider
	tp  trace.TracerProvider
	red *probe.Redactor
}

func (p redactingTracerProvider) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return redactingTracer{tr: p.tp.Tracer(name, opts...), red: p.red}
}

type redactingTracer struct {
	embedded.Tracer
	tr  trace.Tracer
	red *probe.Redactor
}

func (t redactingTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	c := trace.NewSpanStartConfig(opts...)
	clean := []trace.SpanStartOption{trace.WithSpanKind(c.SpanKind())}
	if attrs := c.Attributes(); len(attrs) > 0 {
		clean = append(clean, trace.WithAttributes(redactAttrs(t.red, attrs)...))
	}
	if !c.Timestamp().IsZero() {
		clean = append(clean, trace.WithTimestamp(c.Timestamp()))
	}
	if len(c.Links()) > 0 {
		clean = append(clean, trace.WithLinks(c.Links()...))
	}
	if c.NewRoot() {
		clean = append(clean, trace.WithNewRoot())
	}
	ctx, span := t.tr.Start(ctx, t.red.Text(name), clean...)
	s := redactingSpan{Span: span, red: t.red}
	return trace.ContextWithSpan(ctx, s), s
}

// redactingSpan redacts everything a caller writes into the span.
type redactingSpan struct {
	trace.Span
	red *probe.Redactor
}

func (s redactingSpan) SetAttributes(kv ...attribute.KeyValue) {
	s.Span.SetAttributes(redactAttrs(s.red, kv)...)
}

func (s redactingSpan) SetStatus(code codes.Code, description string) {
	s.Span.SetStatus(code, s.red.Text(description))
}

func (s redactingSpan) SetName(name string) { s.Span.SetName(s.red.Text(name)) }

func (s redactingSpan) RecordError(err error, opts ...trace.EventOption) {
	if err != nil {
		err = errors.New(s.red.Text(err.Error()))
	}
	s.Span.RecordError(err, redactEvent(s.red, opts)...)
}

func (s redactingSpan) AddEvent(name string, opts ...trace.EventOption) {
	s.Span.AddEvent(s.red.Text(name), redactEvent(s.red, opts)...)
}

func redactEvent(red *probe.Redactor, opts []trace.EventOption) []trace.EventOption {
	c := trace.NewEventConfig(opts...)
	clean := []trace.EventOption{trace.WithAttributes(redactAttrs(red, c.Attributes())...), trace.WithStackTrace(c.StackTrace())}
	if !c.Timestamp().IsZero() {
		clean = append(clean, trace.WithTimestamp(c.Timestamp()))
	}
	return clean
}

// redactAttrs redacts string values; url.full also loses its user info,
// query and fragment, as the receiver's own url.full does.
func redactAttrs(red *probe.Redactor, kv []attribute.KeyValue) []attribute.KeyValue {
	out := make([]attribute.KeyValue, len(kv))
	for i, a := range kv {
		switch {
		case a.Key == semconv.URLFull && a.Value.Type() == attribute.STRING:
			a.Value = attribute.StringValue(serverid.Display(a.Value.AsString()))
		case a.Value.Type() == attribute.STRING:
			a.Value = attribute.StringValue(red.Text(a.Value.AsString()))
		case a.Value.Type() == attribute.STRINGSLICE:
			vs := a.Value.AsStringSlice()
			for j := range vs {
				vs[j] = red.Text(vs[j])
			}
			a.Value = attribute.StringSliceValue(vs)
		}
		out[i] = a
	}
	return out
}
