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

// unknownLabel stands for an agent the span did not name.
const unknownLabel = "_unknown"

// overflow is the attribute set of the series that counts what arrives past
// the cardinality limit: otel.metric.overflow=true and nothing else, as the
// OpenTelemetry metrics SDK and the Collector's spanmetrics connector write it.
var overflow = metric.WithAttributeSet(attribute.NewSet(attribute.Bool(semconv.MetricOverflow, true)))

// telemetry records the processor's own metrics with bounded cardinality:
// the stale-call and the calls-by-digest counters each keep their first
// metric_cardinality_limit series and count calls of any other in the
// overflow series.
type telemetry struct {
	tb      *metadata.TelemetryBuilder
	mu      sync.Mutex
	limit   int
	series  map[staleKey]struct{}
	digests map[digestKey]struct{}
}

func newTelemetry(set component.TelemetrySettings, limit int) (*telemetry, error) {
	tb, err := metadata.NewTelemetryBuilder(set)
	if err != nil {
		return nil, err
	}
	return &telemetry{tb: tb, limit: limit, series: map[staleKey]struct{}{}, digests: map[digestKey]struct{}{}}, nil
}

// admit returns whether k has (or now gets) a series of its own in seen,
// and whether it is new; created, the caller records it at 0 under mu.
func admit[K comparable](seen map[K]struct{}, limit int, k K) (own, created bool) {
	if _, ok := seen[k]; ok {
		return true, false
	}
	if len(seen) >= limit {
		return false, false
	}
	seen[k] = struct{}{}
	return true, true
}

// staleKey is a stale-call series: its labels, or the overflow series.
type staleKey struct {
	server, tool, agent string
	overflow            bool
}

// staleKey returns the series a stale call counts in. Series are taken in
// the order calls arrive; once limit are taken, a call of any other series
// counts in the overflow series.
//
// A new series is created at 0 at once: the metrics SDK takes an existing
// overflow series to mean that its own limit was reached, and counts every
// series it has not seen yet in the overflow series from then on. Created
// here, under the lock, every series is in the SDK before the overflow
// series can be. (With delta temporality the SDK forgets its series at each
// collection, so in an interval whose first stale call overflowed, calls of
// existing series are counted in the overflow series too; totals stay right.)
func (t *telemetry) staleKey(ctx context.Context, server, tool, agent string) staleKey {
	if agent == "" {
		agent = unknownLabel
	}
	k := staleKey{server: server, tool: tool, agent: agent}
	t.mu.Lock()
	defer t.mu.Unlock()
	own, created := admit(t.series, t.limit, k)
	if !own {
		return staleKey{overflow: true}
	}
	if created {
		t.tb.ProcessorMcpimpactStaleCalls.Add(ctx, 0, k.attributes())
	}
	return k
}

// digestKey is a calls-by-digest series, or its overflow series.
type digestKey struct {
	server, tool, digest string
	overflow             bool
}

// noDigestLabel stands for calls whose span carried no digest.
const noDigestLabel = "_none"

// digestKey returns the series a call of a known server counts in, as
// staleKey does.
func (t *telemetry) digestKey(ctx context.Context, server, tool, digest string) digestKey {
	if digest == "" {
		digest = noDigestLabel
	}
	k := digestKey{server: server, tool: tool, digest: digest}
	t.mu.Lock()
	defer t.mu.Unlock()
	own, created := admit(t.digests, t.limit, k)
	if !own {
		return digestKey{overflow: true}
	}
	if created {
		t.tb.ProcessorMcpimpactCallsByDigest.Add(ctx, 0, k.attributes())
	}
	return k
}

func (k digestKey) attributes() metric.AddOption {
	if k.overflow {
		return overflow
	}
	return metric.WithAttributes(
		attribute.String(semconv.ServerName, k.server),
		attribute.String(semconv.GenAIToolName, k.tool),
		attribute.String(semconv.ToolDigest, k.digest),
	)
}

// callsByDigest adds calls-by-digest counts by series.
func (t *telemetry) callsByDigest(ctx context.Context, counts map[digestKey]int64) {
	addCounts(ctx, t.tb.ProcessorMcpimpactCallsByDigest, counts)
}

// addCounts adds counts to a counter, by series.
func addCounts[K interface {
	comparable
	attributes() metric.AddOption
}](ctx context.Context, c metric.Int64Counter, counts map[K]int64) {
	for k, n := range counts {
		c.Add(ctx, n, k.attributes())
	}
}

func (k staleKey) attributes() metric.AddOption {
	if k.overflow {
		return overflow
	}
	return metric.WithAttributes(
		attribute.String(semconv.ServerName, k.server),
		attribute.String(semconv.GenAIToolName, k.tool),
		attribute.String(semconv.GenAIAgentName, k.agent),
	)
}

// staleCalls adds stale-call counts by series.
func (t *telemetry) staleCalls(ctx context.Context, counts map[staleKey]int64) {
	addCounts(ctx, t.tb.ProcessorMcpimpactStaleCalls, counts)
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
