package interceptor

import (
	"context"
	"errors"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// StartServerOperation starts the SERVER span of a request or notification
// the server sent to the client (sampling/createMessage, elicitation/create,
// roots/list, ping, notifications), as the MCP semantic conventions describe
// for operations the peer initiates. The span's parent is the trace context
// the server put in params._meta (meta), linked to the ambient context of
// ctx if any. sess may be nil when the connection is not known. Call the
// returned function with the handler's error when it is done; an error with
// a Code() int64 or a JSON-RPC code gives error.type.
func (ic *Interceptor) StartServerOperation(ctx context.Context, sess *Session, method string, meta map[string]any) (context.Context, func(error)) {
	carrier := propagation.MapCarrier{}
	for k, v := range meta {
		if s, ok := v.(string); ok {
			carrier[k] = s
		}
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}
	parent := ic.cfg.propagator.Extract(ctx, carrier)
	if remote := trace.SpanContextFromContext(parent); remote.IsValid() {
		if ambient := trace.SpanContextFromContext(ctx); ambient.IsValid() && !ambient.Equal(remote) {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: ambient}))
		}
		ctx = parent
	}
	attrs := []attribute.KeyValue{attribute.String(semconv.MCPMethodName, method)}
	if sess != nil {
		attrs = sess.appendAgent(ctx, attrs, "")
		attrs = append(attrs, sess.ident.Load().spanAttrs...)
	}
	opts = append(opts, trace.WithAttributes(attrs...))
	ctx, span := ic.tracer.Start(ctx, method, opts...)
	return ctx, func(err error) {
		if err != nil {
			errType := semconv.ErrorTypeOther
			var coded interface{ Code() int64 }
			if errors.As(err, &coded) {
				errType = strconv.FormatInt(coded.Code(), 10)
				span.SetAttributes(attribute.String(semconv.RPCResponseStatusCode, errType))
			}
			span.SetAttributes(attribute.String(semconv.ErrorType, errType))
			span.SetStatus(codes.Error, contract.TruncateBytes(err.Error(), 512))
		}
		span.End()
	}
}
