package proxy_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcpdrift/mcpdrift/proxy"
)

// TestTelemetryConsoleOnStderr: OTEL_TRACES_EXPORTER=console (and the
// metrics' console) print to stderr: in the stdio modes the proxy's stdout
// is the agent's MCP stream, which a span printed there would break.
func TestTelemetryConsoleOnStderr(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "console")
	t.Setenv("OTEL_METRICS_EXPORTER", "console")
	stdout, stderr := capture(t, &os.Stdout), capture(t, &os.Stderr)
	tel, err := proxy.TelemetryFromEnv(context.Background(), "console-test")
	if err != nil {
		t.Fatal(err)
	}
	_, span := tel.Tracer.Tracer("test").Start(context.Background(), "console-span")
	span.End()
	counter, _ := tel.Meter.Meter("test").Int64Counter("console.count")
	counter.Add(context.Background(), 1)
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if out := stdout(); out != "" {
		t.Errorf("stdout (the agent's stream) got %.200s", out)
	}
	if errs := stderr(); !strings.Contains(errs, "console-span") || !strings.Contains(errs, "console.count") {
		t.Errorf("stderr got %.300s, want the span and the metric", errs)
	}
}

// capture points *f at a file for the rest of the test and returns what
// was written to it.
func capture(t *testing.T, f **os.File) func() string {
	name := filepath.Join(t.TempDir(), "out")
	w, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	was := *f
	*f = w
	t.Cleanup(func() { *f = was; w.Close() })
	return func() string {
		b, _ := os.ReadFile(name)
		return string(b)
	}
}

// An export that fails is said on stderr once, as the proxy's, and once
// more when it works again: not at every attempt (a host keeps the stdio
// server's stderr as its log). With only the general OTLP endpoint set,
// metrics are not exported: a collector with no metrics pipeline answered
// them 404 every minute.
func TestTelemetryExportFailuresSaidOnce(t *testing.T) {
	var mu sync.Mutex
	failing, paths := true, map[string]int{}
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		defer mu.Unlock()
		paths[r.URL.Path]++
		if failing {
			http.Error(w, "no pipeline", http.StatusNotFound) // not retried
			return
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	stderr := capture(t, &os.Stderr)
	tel, err := proxy.TelemetryFromEnv(context.Background(), "export-test")
	if err != nil {
		t.Fatal(err)
	}
	flush := func() {
		_, span := tel.Tracer.Tracer("test").Start(context.Background(), "span")
		span.End()
		_ = tel.Tracer.(interface{ ForceFlush(context.Context) error }).ForceFlush(context.Background())
	}
	for range 5 {
		flush()
	}
	mu.Lock()
	failing = false
	mu.Unlock()
	flush()
	flush()
	counter, _ := tel.Meter.Meter("test").Int64Counter("export.count")
	counter.Add(context.Background(), 1)
	_ = tel.Shutdown(context.Background())
	out := stderr()
	if strings.Count(out, "mcpdrift proxy: exporting traces failed") != 1 || strings.Count(out, "mcpdrift proxy: exporting traces works again") != 1 || strings.Count(out, "\n") != 2 {
		t.Errorf("stderr:\n%s", out)
	}
	mu.Lock()
	defer mu.Unlock()
	if paths["/v1/traces"] != 7 || paths["/v1/metrics"] != 0 {
		t.Errorf("requests by path %v, want 7 to /v1/traces and none to /v1/metrics", paths)
	}
}

// TestTelemetryOffRecordsNothing: with no exporter configured the proxy
// records nothing: its tracer makes no spans (none recording, no span ids:
// no per-call SDK work), a call's frame reaches the server as the agent
// wrote it (no trace context of spans nobody will see), and an agent's own
// trace context passes on unchanged. Before, an SDK tracer provider with no
// exporter recorded every call's span and dropped it at its end.
func TestTelemetryOffRecordsNothing(t *testing.T) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_TRACES_EXPORTER",
		"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_METRICS_EXPORTER"} {
		t.Setenv(k, "")
	}
	tel, err := proxy.TelemetryFromEnv(context.Background(), "off-test")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tel.Shutdown(context.Background()) }()
	_, span := tel.Tracer.Tracer("test").Start(context.Background(), "span")
	if span.IsRecording() || span.SpanContext().IsValid() {
		t.Errorf("a span with telemetry off: recording %v, context %v", span.IsRecording(), span.SpanContext())
	}
	span.End()

	p := startStdio(t, proxy.Config{InjectTraceContext: true}, &telemetry{Telemetry: tel}, "echo")
	p.recv(t)
	p.recv(t)
	frames := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},"name":"a"}}`,
	}
	for i, f := range frames {
		p.send(t, f)
		p.recvID(t, strconv.Itoa(i+1))
	}
	if got := p.serverLog(t); len(got) != 2 || got[0] != frames[0] || got[1] != frames[1] {
		t.Errorf("the server got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(frames, "\n"))
	}
}
