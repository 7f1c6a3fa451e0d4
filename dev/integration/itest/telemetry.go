// Package itest holds what the interceptor's front-end tests share: an
// OpenTelemetry SDK pipeline with in-memory exporters, demo MCP servers of
// both SDKs (one whose tool changes mid-session), and span assertions.
package itest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpdrift/mcpdrift/interceptor"
)

// Telemetry is an SDK tracer and meter provider exporting to memory.
type Telemetry struct {
	Exporter *tracetest.InMemoryExporter
	TP       *sdktrace.TracerProvider
	Reader   *sdkmetric.ManualReader
	MP       *sdkmetric.MeterProvider

	mu     sync.Mutex
	errors []error
}

// NewTelemetry returns providers that export synchronously, so a span is
// visible as soon as it ends.
func NewTelemetry(t testing.TB) *Telemetry {
	tel := &Telemetry{Exporter: tracetest.NewInMemoryExporter(), Reader: sdkmetric.NewManualReader()}
	tel.TP = sdktrace.NewTracerProvider(sdktrace.WithSyncer(tel.Exporter))
	tel.MP = sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.Reader))
	t.Cleanup(func() {
		_ = tel.TP.Shutdown(context.Background())
		_ = tel.MP.Shutdown(context.Background())
	})
	return tel
}

// Options are interceptor options using these providers, W3C trace context
// propagation and an error handler that records; extra come after.
func (tel *Telemetry) Options(extra ...interceptor.Option) []interceptor.Option {
	return append([]interceptor.Option{
		interceptor.WithTracerProvider(tel.TP),
		interceptor.WithMeterProvider(tel.MP),
		interceptor.WithPropagators(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})),
		interceptor.WithErrorHandler(tel.handle),
	}, extra...)
}

func (tel *Telemetry) handle(err error) {
	tel.mu.Lock()
	tel.errors = append(tel.errors, err)
	tel.mu.Unlock()
}

// Errors are the interceptor's own errors reported so far.
func (tel *Telemetry) Errors() []error {
	tel.mu.Lock()
	defer tel.mu.Unlock()
	return slices.Clone(tel.errors)
}

// Spans are the spans ended so far.
func (tel *Telemetry) Spans() tracetest.SpanStubs { return tel.Exporter.GetSpans() }

// Named returns the ended spans with this name, in end order.
func (tel *Telemetry) Named(name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range tel.Spans() {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// WaitNamed waits (briefly) until n spans with this name have ended; spans of
// asynchronous exchanges (HTTP streams, notifications) may end just after the
// call that caused them returns.
func (tel *Telemetry) WaitNamed(t testing.TB, name string, n int) []tracetest.SpanStub {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := tel.Named(name)
		if len(got) >= n || time.Now().After(deadline) {
			if len(got) < n {
				t.Fatalf("want %d spans %q, got %d; all spans:\n%s", n, name, len(got), tel.Dump())
			}
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Dump lists span names and attributes, for failure messages.
func (tel *Telemetry) Dump() string {
	var b strings.Builder
	for _, s := range tel.Spans() {
		fmt.Fprintf(&b, "  %s [%s]", s.Name, s.SpanKind)
		for _, kv := range s.Attributes {
			fmt.Fprintf(&b, " %s=%s", kv.Key, kv.Value.String())
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Attr returns a span attribute (the SDK ends a span with each key once).
func Attr(s tracetest.SpanStub, key string) (attribute.Value, bool) {
	set := attribute.NewSet(s.Attributes...)
	return set.Value(attribute.Key(key))
}

// Str returns a string attribute, "" if absent.
func Str(s tracetest.SpanStub, key string) string {
	v, _ := Attr(s, key)
	return v.AsString()
}

// Want checks string and bool attributes of a span: a value of nil means
// the attribute must be absent.
func Want(t testing.TB, s tracetest.SpanStub, want map[string]any) {
	t.Helper()
	for k, w := range want {
		v, ok := Attr(s, k)
		switch w := w.(type) {
		case nil:
			if ok {
				t.Errorf("span %q: %s = %s, want absent", s.Name, k, v.String())
			}
		case string:
			if !ok || v.Type() != attribute.STRING || v.AsString() != w {
				t.Errorf("span %q: %s = %q (present %v), want %q", s.Name, k, v.String(), ok, w)
			}
		case bool:
			if !ok || v.Type() != attribute.BOOL || v.AsBool() != w {
				t.Errorf("span %q: %s = %s (present %v), want %v", s.Name, k, v.String(), ok, w)
			}
		case int:
			if !ok || v.Type() != attribute.INT64 || v.AsInt64() != int64(w) {
				t.Errorf("span %q: %s = %s (present %v), want %d", s.Name, k, v.String(), ok, w)
			}
		default:
			t.Fatalf("Want: unsupported %T", w)
		}
	}
}

// IsClient checks a span is a CLIENT span.
func IsClient(t testing.TB, s tracetest.SpanStub) {
	t.Helper()
	if s.SpanKind != trace.SpanKindClient {
		t.Errorf("span %q has kind %s, want client", s.Name, s.SpanKind)
	}
}

// HistogramCount returns how many measurements of a histogram carry all the
// given attributes.
func (tel *Telemetry) HistogramCount(t testing.TB, name string, attrs ...attribute.KeyValue) uint64 {
	t.Helper()
	var n uint64
	for _, dp := range tel.HistogramPoints(t, name) {
		if HasAttributes(dp.Attributes, attrs...) {
			n += dp.Count
		}
	}
	return n
}

// HistogramPoints collects the data points of a float64 histogram.
func (tel *Telemetry) HistogramPoints(t testing.TB, name string) []metricdata.HistogramDataPoint[float64] {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tel.Reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var out []metricdata.HistogramDataPoint[float64]
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			h, ok := m.Data.(metricdata.Histogram[float64])
			if !ok {
				t.Fatalf("%s is %T, want a float64 histogram", name, m.Data)
			}
			out = append(out, h.DataPoints...)
		}
	}
	return out
}

// HasAttributes reports whether set holds every one of want, with its value.
func HasAttributes(set attribute.Set, want ...attribute.KeyValue) bool {
	for _, kv := range want {
		if v, ok := set.Value(kv.Key); !ok || v != kv.Value {
			return false
		}
	}
	return true
}
