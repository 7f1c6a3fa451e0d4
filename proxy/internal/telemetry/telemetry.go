// Package telemetry is where the proxy's spans and metrics go, and the
// instruments every mode shares: the interceptor as the flags configure it
// and the count of refused calls.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/proxy/internal/config"
	"github.com/mcpdrift/mcpdrift/proxy/internal/exportlog"
	"github.com/mcpdrift/mcpdrift/semconv"
	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconvres "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// Telemetry is where the proxy's spans and metrics go.
type Telemetry struct {
	Tracer     trace.TracerProvider
	Meter      metric.MeterProvider
	Propagator propagation.TextMapPropagator
	// Shutdown flushes and stops the exporters (spans are flushed on exit).
	Shutdown func(context.Context) error
}

// None records nothing.
func None() Telemetry {
	return Telemetry{
		Tracer: tracenoop.NewTracerProvider(), Meter: metricnoop.NewMeterProvider(),
		Propagator: propagation.TraceContext{},
		Shutdown:   func(context.Context) error { return nil },
	}
}

// FromEnv exports as the standard OpenTelemetry environment
// variables say (OTEL_EXPORTER_OTLP_*, OTEL_TRACES_EXPORTER,
// OTEL_METRICS_EXPORTER, OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME): OTLP
// over HTTP or gRPC through the contrib autoexport package. With no
// endpoint and no exporter named, nothing is exported (the SDK's default
// would try localhost:4318 from every agent host that launches the proxy)
// and nothing is recorded: the tracer (the meter, when no metrics are asked
// for) is a no-op, so a call costs no span, no span id and no SDK work, and
// the proxy hands the server no context of spans nobody will see (an
// agent's own trace context passes on as it came).
// serviceName is the resource's service.name unless the environment names
// one. The console exporters print to stderr, not stdout: in the stdio
// modes stdout is the agent's MCP stream. An export that fails is said on
// stderr once, not at every attempt (exportlog), and metrics are exported
// only when asked for: a collector with no metrics pipeline answers them
// 404 every minute.
func FromEnv(ctx context.Context, serviceName string) (Telemetry, error) {
	res, err := resource.New(ctx,
		resource.WithAttributes(semconvres.ServiceName(serviceName)),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && res == nil {
		return Telemetry{}, err
	}
	exports := exportlog.New(os.Stderr)
	otel.SetErrorHandler(exports) // the SDK's default logs every failed attempt
	tel := None()
	var shutdown []func(context.Context) error
	if configured("TRACES", true) {
		exp, err := spanExporter(ctx)
		if err != nil {
			return Telemetry{}, err
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithBatcher(exports.Spans(exp)))
		tel.Tracer, shutdown = tp, append(shutdown, tp.Shutdown)
	}
	if configured("METRICS", false) {
		r, err := metricReader(ctx, exports)
		if err != nil {
			return Telemetry{}, err
		}
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(r))
		tel.Meter, shutdown = mp, append(shutdown, mp.Shutdown)
	}
	tel.Propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	tel.Shutdown = func(ctx context.Context) error {
		var errs []error
		for _, f := range shutdown {
			errs = append(errs, f(ctx))
		}
		return errors.Join(errs...)
	}
	return tel, nil
}

// configured reports whether the environment asks for a signal's export:
// the signal's OTLP endpoint or exporter named, or, when byDefault, the
// general OTLP endpoint. Metrics are not exported by default.
func configured(signal string, byDefault bool) bool {
	keys := []string{"OTEL_EXPORTER_OTLP_" + signal + "_ENDPOINT", "OTEL_" + signal + "_EXPORTER"}
	if byDefault {
		keys = append(keys, "OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	for _, k := range keys {
		if os.Getenv(k) != "" {
			return os.Getenv("OTEL_"+signal+"_EXPORTER") != "none"
		}
	}
	return false
}

// spanExporter is the exporter OTEL_TRACES_EXPORTER names; "console"
// prints to stderr.
func spanExporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	if os.Getenv("OTEL_TRACES_EXPORTER") == "console" {
		return stdouttrace.New(stdouttrace.WithWriter(os.Stderr))
	}
	return autoexport.NewSpanExporter(ctx)
}

// metricReader is the reader OTEL_METRICS_EXPORTER names; "console"
// prints to stderr. The pushing exporters (OTLP, the default, and console)
// are built here rather than by autoexport, whose reader hides its exporter:
// wrapped, their failures are said as the metrics' (exportlog). The pulled
// ones (prometheus) and none come from autoexport.
func metricReader(ctx context.Context, exports *exportlog.Log) (sdkmetric.Reader, error) {
	var exp sdkmetric.Exporter
	var err error
	switch os.Getenv("OTEL_METRICS_EXPORTER") {
	case "console":
		exp, err = stdoutmetric.New(stdoutmetric.WithWriter(os.Stderr))
	case "", "otlp":
		exp, err = otlpMetricExporter(ctx)
	default:
		return autoexport.NewMetricReader(ctx)
	}
	if err != nil {
		return nil, err
	}
	return sdkmetric.NewPeriodicReader(exports.Metrics(exp)), nil
}

// otlpMetricExporter is the OTLP metric exporter over the protocol the
// environment names (OTEL_EXPORTER_OTLP_METRICS_PROTOCOL, else
// OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf), as autoexport chooses
// it; the exporters read the rest of their configuration from the
// environment themselves.
func otlpMetricExporter(ctx context.Context) (sdkmetric.Exporter, error) {
	proto := os.Getenv("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL")
	if proto == "" {
		proto = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch proto {
	case "", "http/protobuf":
		return otlpmetrichttp.New(ctx)
	case "grpc":
		return otlpmetricgrpc.New(ctx)
	}
	return nil, fmt.Errorf("OTLP metrics protocol %q: want grpc or http/protobuf", proto)
}

// ScopeName is the instrumentation scope of the proxy's own spans and metrics.
const ScopeName = "github.com/mcpdrift/mcpdrift/proxy"

// Interceptor is the interceptor configured as the proxy's flags say.
func Interceptor(cfg *config.Config, tel Telemetry) *interceptor.Interceptor {
	opts := []interceptor.Option{
		interceptor.WithTracerProvider(tel.Tracer), interceptor.WithMeterProvider(tel.Meter),
		interceptor.WithPropagators(tel.Propagator), interceptor.WithLimits(cfg.Limits),
		interceptor.WithTraceContextInjection(cfg.InjectTraceContext),
		interceptor.WithTraceContextContinuation(cfg.InjectTraceContext),
		interceptor.WithErrorHandler(func(error) {}), // the proxy's stderr is the server's: nothing of ours goes there
	}
	if cfg.ServerName != "" {
		opts = append(opts, interceptor.WithServerName(cfg.ServerName))
	}
	if cfg.AgentName != "" {
		opts = append(opts, interceptor.WithAgent(cfg.AgentName, ""))
	} else {
		opts = append(opts, interceptor.WithClientInfoAgent()) // the agents name themselves
	}
	return interceptor.New(opts...)
}

// Refusals counts the calls the proxy answered itself.
func Refusals(tel Telemetry) metric.Int64Counter {
	c, _ := tel.Meter.Meter(ScopeName).Int64Counter(semconv.MetricProxyRefusals,
		metric.WithDescription("Calls the proxy answered itself instead of forwarding: stale or unapproved tool definitions."))
	return c
}
