// Package exportlog tells the user, on the proxy's stderr, that its
// telemetry cannot be exported, once per change of state: when a signal's
// export starts failing and when it recovers, never at every attempt. In
// the stdio modes stderr is the host's log of the server, so each line says
// it is the proxy's; nothing goes to stdout, the agent's MCP stream.
package exportlog

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

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

// Handle is called by the SDK with every export error.
func (l *Log) Handle(err error) {
	l.state(signalOf(err.Error()), err)
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

// signalOf tells which signal an SDK error is about from its message:
// the exporters name it ("traces export: …", "failed to upload metrics: …").
func signalOf(msg string) string {
	m := strings.ToLower(msg)
	switch {
	case strings.Contains(m, "metric"):
		return "metrics"
	case strings.Contains(m, "trace"), strings.Contains(m, "span"):
		return "traces"
	}
	return "telemetry"
}

// Spans wraps a span exporter so that its outcomes are known whichever way
// the SDK reports them (a flush returns the error rather than handling it),
// and a successful export ends a failing state.
func (l *Log) Spans(e sdktrace.SpanExporter) sdktrace.SpanExporter { return spans{e, l} }

type spans struct {
	sdktrace.SpanExporter
	l *Log
}

func (s spans) ExportSpans(ctx context.Context, ss []sdktrace.ReadOnlySpan) error {
	err := s.SpanExporter.ExportSpans(ctx, ss)
	s.l.state("traces", err)
	return err
}
