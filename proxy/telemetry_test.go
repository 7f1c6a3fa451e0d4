package proxy_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
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
