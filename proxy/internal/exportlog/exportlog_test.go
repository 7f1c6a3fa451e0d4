package exportlog

import (
	"context"
	"errors"
	"strings"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// failingMetrics is a metric exporter whose every export fails with err.
type failingMetrics struct {
	sdkmetric.Exporter
	err error
}

func (f failingMetrics) Export(context.Context, *metricdata.ResourceMetrics) error { return f.err }

// TestSignalFromExporter: which signal failed is known from the exporter
// that failed, not from the wording of its error: a span exporter's error
// that talks of metrics is still about traces, and the other way round.
func TestSignalFromExporter(t *testing.T) {
	var out strings.Builder
	l := New(&out)
	spanErr := errors.New("upload of metrics-service spans refused")
	failingSpans := l.Spans(spanExporterFunc(func() error { return spanErr }))
	err := failingSpans.ExportSpans(context.Background(), nil)
	if !errors.Is(err, spanErr) || err.Error() != spanErr.Error() {
		t.Fatalf("ExportSpans = %v, want %v as it was", err, spanErr)
	}
	l.Handle(err) // the SDK hands the same error on: said once

	metricErr := errors.New("trace context collector: 404")
	m := l.Metrics(failingMetrics{err: metricErr})
	l.Handle(m.Export(context.Background(), &metricdata.ResourceMetrics{}))
	l.Handle(errors.New("traces export: queue full")) // the SDK's own: no exporter named it

	want := "mcpdrift proxy: exporting traces failed: " + spanErr.Error() + " (said once; the proxy carries on)\n" +
		"mcpdrift proxy: exporting metrics failed: " + metricErr.Error() + " (said once; the proxy carries on)\n" +
		"mcpdrift proxy: exporting telemetry failed: traces export: queue full (said once; the proxy carries on)\n"
	if out.String() != want {
		t.Errorf("logged:\n%s\nwant:\n%s", out.String(), want)
	}
}

type spanExporterFunc func() error

func (f spanExporterFunc) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return f() }
func (f spanExporterFunc) Shutdown(context.Context) error                             { return nil }
