package mcpimpactprocessor

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/mcpdrift/mcpdrift/processor/mcpimpactprocessor/internal/metadata"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// Label values standing in for what the metrics do not spell out.
const (
	otherLabel   = "_other"   // past metric_label_limit distinct values
	unknownLabel = "_unknown" // the span did not say
)

// telemetry records the processor's own metrics with bounded label
// cardinality: each label keeps its first metric_label_limit distinct
// values and reports later ones as "_other".
type telemetry struct {
	tb      *metadata.TelemetryBuilder
	mu      sync.Mutex
	limit   int
	servers map[string]struct{}
	tools   map[string]struct{}
	agents  map[string]struct{}
}

func newTelemetry(set component.TelemetrySettings, limit int) (*telemetry, error) {
	tb, err := metadata.NewTelemetryBuilder(set)
	if err != nil {
		return nil, err
	}
	return &telemetry{
		tb:      tb,
		limit:   limit,
		servers: map[string]struct{}{},
		tools:   map[string]struct{}{},
		agents:  map[string]struct{}{},
	}, nil
}

// bounded returns v, or "_other" once the label already has limit values.
func (t *telemetry) bounded(seen map[string]struct{}, v string) string {
	if _, ok := seen[v]; ok {
		return v
	}
	if len(seen) >= t.limit {
		return otherLabel
	}
	seen[v] = struct{}{}
	return v
}

type staleKey struct{ server, tool, agent string }

// staleKey returns the bounded labels of a stale call. Values get labels in
// the order calls arrive.
func (t *telemetry) staleKey(server, tool, agent string) staleKey {
	if agent == "" {
		agent = unknownLabel
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return staleKey{t.bounded(t.servers, server), t.bounded(t.tools, tool), t.bounded(t.agents, agent)}
}

// staleCalls adds stale-call counts by (bounded) server, tool and agent.
func (t *telemetry) staleCalls(ctx context.Context, counts map[staleKey]int64) {
	for k, n := range counts {
		t.tb.ProcessorMcpimpactStaleCalls.Add(ctx, n, metric.WithAttributes(
			attribute.String(semconv.ServerName, k.server),
			attribute.String(semconv.GenAIToolName, k.tool),
			attribute.String(semconv.GenAIAgentName, k.agent),
		))
	}
}

func (t *telemetry) toolCalls(ctx context.Context, byDialect *[dialects]int64) {
	for d, n := range byDialect {
		if n > 0 {
			t.tb.ProcessorMcpimpactToolCalls.Add(ctx, n, metric.WithAttributes(attribute.String("dialect", dialect(d).String())))
		}
	}
}

func (t *telemetry) removals(ctx context.Context, r removals) {
	if r.capacity > 0 {
		t.tb.ProcessorMcpimpactIndexEvictions.Add(ctx, int64(r.capacity), metric.WithAttributes(attribute.String("reason", "capacity")))
	}
	if r.window > 0 {
		t.tb.ProcessorMcpimpactIndexEvictions.Add(ctx, int64(r.window), metric.WithAttributes(attribute.String("reason", "window")))
	}
}

func (t *telemetry) impactRecords(ctx context.Context, byRisk map[string]int64) {
	for r, n := range byRisk {
		t.tb.ProcessorMcpimpactImpactRecords.Add(ctx, n, metric.WithAttributes(attribute.String("risk", r)))
	}
}

func (t *telemetry) shutdown() { t.tb.Shutdown() }

// Attributes the Collector injects into a component's telemetry per
// pipeline. One instance serves two pipelines, so they would describe only
// the first; the Collector's own shared components drop them the same way
// (through an internal package, hence this copy of its duck typing).
var pipelineAttributes = []string{"otelcol.signal", "otelcol.pipeline.id"}

type injectorCore interface {
	DropInjectedAttributes(droppedAttrs ...string) zapcore.Core
}

type injectorTracerProvider interface {
	DropInjectedAttributes(droppedAttrs ...string) trace.TracerProvider
}

type injectorMeterProvider interface {
	DropInjectedAttributes(droppedAttrs ...string) metric.MeterProvider
}

func withoutPipelineAttributes(ts component.TelemetrySettings) component.TelemetrySettings {
	ts.Logger = ts.Logger.WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core {
		if ic, ok := c.(injectorCore); ok {
			return ic.DropInjectedAttributes(pipelineAttributes...)
		}
		return c
	}))
	if tp, ok := ts.TracerProvider.(injectorTracerProvider); ok {
		ts.TracerProvider = tp.DropInjectedAttributes(pipelineAttributes...)
	}
	if mp, ok := ts.MeterProvider.(injectorMeterProvider); ok {
		ts.MeterProvider = mp.DropInjectedAttributes(pipelineAttributes...)
	}
	return ts
}
