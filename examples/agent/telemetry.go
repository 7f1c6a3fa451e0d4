package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpdrift/mcpdrift/interceptor"
	"github.com/mcpdrift/mcpdrift/semconv"
	"go.opentelemetry.io/otel/attribute"
)

// telemetry is the agent's OpenTelemetry pipeline.
type telemetry struct {
	tp       trace.TracerProvider
	mp       metric.MeterProvider
	res      *resource.Resource
	shutdown func(context.Context) error
}

func (t telemetry) options() []interceptor.Option {
	return []interceptor.Option{
		interceptor.WithTracerProvider(t.tp),
		interceptor.WithMeterProvider(t.mp),
		interceptor.WithResource(t.res),
		interceptor.WithPropagators(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})),
	}
}

// setupTelemetry builds tracer and meter providers exporting OTLP over the
// configured protocol.
func setupTelemetry(ctx context.Context, cfg config) (telemetry, error) {
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String(semconv.ServiceName, cfg.serviceName)))
	if err != nil {
		return telemetry{}, err
	}
	if cfg.otlpEndpoint == "none" {
		tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res))
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithResource(res))
		return telemetry{tp: tp, mp: mp, res: res, shutdown: func(ctx context.Context) error {
			return errors.Join(tp.Shutdown(ctx), mp.Shutdown(ctx))
		}}, nil
	}
	spans, metrics, err := exporters(ctx, cfg)
	if err != nil {
		return telemetry{}, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithBatcher(spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithResource(res),
		sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metrics, sdkmetric.WithInterval(10*time.Second))))
	return telemetry{tp: tp, mp: mp, res: res, shutdown: func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		return errors.Join(tp.Shutdown(ctx), mp.Shutdown(ctx))
	}}, nil
}

func exporters(ctx context.Context, cfg config) (sdktrace.SpanExporter, sdkmetric.Exporter, error) {
	ep := cfg.otlpEndpoint
	if cfg.otlpProtocol == "grpc" {
		var topts []otlptracegrpc.Option
		var mopts []otlpmetricgrpc.Option
		if ep != "" {
			if !strings.Contains(ep, "://") {
				ep = "http://" + ep // host:port: plaintext, as a local collector serves it
			}
			topts = append(topts, otlptracegrpc.WithEndpointURL(ep))
			mopts = append(mopts, otlpmetricgrpc.WithEndpointURL(ep))
		}
		spans, err := otlptracegrpc.New(ctx, topts...)
		if err != nil {
			return nil, nil, fmt.Errorf("OTLP/gRPC trace exporter: %w", err)
		}
		metrics, err := otlpmetricgrpc.New(ctx, mopts...)
		if err != nil {
			return nil, nil, fmt.Errorf("OTLP/gRPC metric exporter: %w", err)
		}
		return spans, metrics, nil
	}
	var topts []otlptracehttp.Option
	var mopts []otlpmetrichttp.Option
	if ep != "" {
		if !strings.Contains(ep, "://") {
			ep = "http://" + ep
		}
		// A base URL, as OTEL_EXPORTER_OTLP_ENDPOINT is: the signal paths follow.
		base := strings.TrimSuffix(ep, "/")
		topts = append(topts, otlptracehttp.WithEndpointURL(base+"/v1/traces"))
		mopts = append(mopts, otlpmetrichttp.WithEndpointURL(base+"/v1/metrics"))
	}
	spans, err := otlptracehttp.New(ctx, topts...)
	if err != nil {
		return nil, nil, fmt.Errorf("OTLP/HTTP trace exporter: %w", err)
	}
	metrics, err := otlpmetrichttp.New(ctx, mopts...)
	if err != nil {
		return nil, nil, fmt.Errorf("OTLP/HTTP metric exporter: %w", err)
	}
	return spans, metrics, nil
}
