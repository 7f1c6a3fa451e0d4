package proxy_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcpdrift/mcpdrift/proxy"
)

// The proxy module's own tests are those that need its internal hooks
// (export_test.go); the rest, which share child servers and helpers with the
// tests that need dev tooling, are in dev/integration/proxy.

// sdkTelemetry hands the proxy an OpenTelemetry SDK tracer and meter
// provider that export nowhere, so it records as a proxy with an exporter
// configured does: these tests check what it forwards, not its spans.
func sdkTelemetry(t testing.TB) proxy.Telemetry {
	tel := proxy.NoTelemetry()
	tp, mp := sdktrace.NewTracerProvider(), sdkmetric.NewMeterProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
	tel.Tracer, tel.Meter = tp, mp
	return tel
}

// writeEvents writes n events "id: i\ndata: {}\n\n" to an event stream,
// each when next lets it (so the test knows the upstream holds the rest).
func writeEvents(w http.ResponseWriter, r *http.Request, next <-chan struct{}, n int) {
	for i := range n {
		select {
		case <-next:
		case <-r.Context().Done():
			return
		}
		fmt.Fprintf(w, "id: %d\ndata: {}\n\n", i)
		w.(http.Flusher).Flush()
	}
}

// readEvents lets writeEvents write each of its n events and reads it
// from br before letting the next go: a stalled stream fails when ctx ends.
func readEvents(ctx context.Context, t testing.TB, br *bufio.Reader, next chan<- struct{}, n int) {
	t.Helper()
	for i := range n {
		select {
		case next <- struct{}{}:
		case <-ctx.Done():
			t.Fatal("stalled")
		}
		for _, want := range []string{fmt.Sprintf("id: %d\n", i), "data: {}\n", "\n"} {
			if line, err := br.ReadString('\n'); line != want {
				t.Fatalf("event %d: %q (%v), want %q", i, line, err, want)
			}
		}
	}
}

// receive waits for a value on ch and returns it; after 30 s it fails t,
// saying what did not come.
func receive[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatal(what)
		var zero T
		return zero
	}
}
