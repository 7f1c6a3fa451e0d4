package mcpimpactprocessor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/mcpdrift/mcpdrift/processor/mcpimpactprocessor/internal/metadatatest"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// Past metric_cardinality_limit series, stale calls are counted in one
// series whose only attribute is otel.metric.overflow=true, as the
// OpenTelemetry metrics SDK and the Collector's spanmetrics connector write
// it; series seen before the limit keep counting.
func TestStaleCallMetricOverflows(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.MetricCardinalityLimit = 2
	h := newHarness(t, cfg)
	h.sendLogs(snapshotLogs(supersededSnapshot(t0.Add(-2*time.Hour), map[string]string{"search": "old", "fetch": "old"})))
	h.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-time.Hour))))
	var calls []call
	for i := range 4 {
		calls = append(calls, call{agent: fmt.Sprintf("agent-%d", i), server: srv, url: srvURL, tool: "search", session: "s", digest: "old", at: t0})
	}
	calls = append(calls,
		call{agent: "agent-0", server: srv, url: srvURL, tool: "search", session: "s", digest: "d1", at: t0},  // fresh
		call{server: srv, url: srvURL, tool: "fetch", session: "s", digest: "old", at: t0},                    // no agent, no service
		call{agent: "agent-1", server: srv, url: srvURL, tool: "search", session: "s", digest: "old", at: t0}, // an existing series
	)
	h.sendSpans(callsOf(calls...))

	point := func(tool, agent string, n int64) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Value: n, Attributes: attribute.NewSet(
			attribute.String(semconv.ServerName, srv),
			attribute.String(semconv.GenAIToolName, tool),
			attribute.String(semconv.GenAIAgentName, agent))}
	}
	metadatatest.AssertEqualProcessorMcpimpactStaleCalls(t, h.tel, []metricdata.DataPoint[int64]{
		point("search", "agent-0", 1),
		point("search", "agent-1", 2),
		{Value: 3, Attributes: attribute.NewSet(attribute.Bool("otel.metric.overflow", true))}, // agent-2, agent-3, fetch by _unknown
	}, metricdatatest.IgnoreTimestamp())
}

func TestImpactRecordMetric(t *testing.T) {
	h := newHarness(t, nil)
	h.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-time.Hour))))
	h.sendSpans(callsOf(call{agent: "planner", server: srv, url: srvURL, tool: "search", session: "s", digest: "d1", at: t0}))
	h.sendLogs(driftLogs(searchDrift(t0)))
	metadatatest.AssertEqualProcessorMcpimpactImpactRecords(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.String("risk", "high"))},
		{Value: 1, Attributes: attribute.NewSet(attribute.String("risk", "low"))},
	}, metricdatatest.IgnoreTimestamp())
	assertCalls(t, h, map[string]int64{"semconv": 1})
	assert.Equal(t, 1, entriesGauge(t, h))
}

func TestStaleSeriesLimit(t *testing.T) {
	ctx := context.Background()
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(ctx)) })
	tel, err := newTelemetry(tt.NewTelemetrySettings(), 3)
	require.NoError(t, err)
	a, b, unknown := tel.staleKey(ctx, "s", "t", "a"), tel.staleKey(ctx, "s", "t", "b"), tel.staleKey(ctx, "s", "t", "")
	require.False(t, a.overflow || b.overflow || unknown.overflow)
	require.Equal(t, unknownLabel, unknown.agent)
	require.Equal(t, staleKey{overflow: true}, tel.staleKey(ctx, "s", "t", "c"))
	require.True(t, tel.staleKey(ctx, "s2", "t", "a").overflow, "a new server is a new series too")
	require.Equal(t, a, tel.staleKey(ctx, "s", "t", "a"), "series seen before the limit keep their labels")

	// The overflow series is counted before a series taken earlier is: the
	// earlier one keeps its own series (the SDK would count a series it has
	// not seen yet in the overflow series once that exists).
	tel.staleCalls(ctx, map[staleKey]int64{{overflow: true}: 3})
	tel.staleCalls(ctx, map[staleKey]int64{b: 2})
	point := func(agent string, n int64) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Value: n, Attributes: attribute.NewSet(
			attribute.String(semconv.ServerName, "s"), attribute.String(semconv.GenAIToolName, "t"), attribute.String(semconv.GenAIAgentName, agent))}
	}
	metadatatest.AssertEqualProcessorMcpimpactStaleCalls(t, tt, []metricdata.DataPoint[int64]{
		point("a", 0), point("b", 2), point(unknownLabel, 0),
		{Value: 3, Attributes: attribute.NewSet(attribute.Bool(semconv.MetricOverflow, true))},
	}, metricdatatest.IgnoreTimestamp())
}
