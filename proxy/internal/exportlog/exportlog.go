// Package exportlog tells the user, on the proxy's stderr, that its
// telemetry cannot be exported, once per change of state: when a signal's
// export starts failing and when it recovers, never at every attempt. In
// the stdio modes stderr is the host's log of the server, so each line says
// it is the proxy's; nothing goes to stdout, the agent's MCP stream.
package exportlog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Log is an otel.ErrorHandler that logs each signal's failures once.
type Log struct {
	mu      sync.Mutex
	w       io.Writer
	failing map[string]bool // by signal: "traces", "metrics", "telemetry"
}

// New logs to w.
func New(w io.Writer) *Log { return &Log{w: w, failing: map[string]bool{}} }

// Handle is called by the SDK with every export error. An error from an
// exporter wrapped here (Spans, Metrics) says which signal failed; any
// other is the SDK's own, about telemetry as a whole.
func (l *Log) Handle(err error) {
	signal := "telemetry"
	var se *signalError
	if errors.As(err, &se) {
		signal = se.signal
	}
	l.state(signal, err)
}

// signalError is an export error marked with the signal whose exporter
// returned it; it reads as the error it wraps.
type signalError struct {
	signal string
	err    error
}

func (e *signalError) Error() string { return e.err.Error() }
func (e *signalError) Unwrap() error { return e.err }

// outcome records a wrapped exporter's outcome and returns its error
// marked with the signal.
func (l *Log) outcome(signal string, err error) error {
	l.state(signal, err)
	if err == nil {
		return nil
	}
	return &signalError{signal: signal, err: err}
}

// state records a signal's outcome and logs a change.
func (l *Log) state(signal string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err != nil && !l.failing[signal]:
		l.failing[signal] = true
		fmt.Fprintf(l.w, "mcpdrift proxy: exporting %s failed: %v (said once; the proxy carries on)\n", signal, err)
	case err == nil && l.failing[signal]:
		l.failing[signal] = false
		fmt.Fprintf(l.w, "mcpdrift proxy: exporting %s works again\n", signal)
	}
}

// Spans wraps a span exporter so that its outcomes are known whichever way
// the SDK reports them (a flush returns the error rather than handling it),
// a successful export ends a failing state, and its errors name traces.
func (l *Log) Spans(e sdktrace.SpanExporter) sdktrace.SpanExporter { return spans{e, l} }

type spans struct {
	sdktrace.SpanExporter
	l *Log
}

func (s spans) ExportSpans(ctx context.Context, ss []sdktrace.ReadOnlySpan) error {
	return s.l.outcome("traces", s.SpanExporter.ExportSpans(ctx, ss))
}

// Metrics wraps a metric exporter as Spans does a span exporter.
func (l *Log) Metrics(e sdkmetric.Exporter) sdkmetric.Exporter { return metrics{e, l} }

type metrics struct {
	sdkmetric.Exporter
	l *Log
}

func (m metrics) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	return m.l.outcome("metrics", m.Exporter.Export(ctx, rm))
}
