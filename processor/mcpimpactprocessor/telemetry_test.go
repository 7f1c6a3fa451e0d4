package mcpimpactprocessor

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/mcpdrift/mcpdrift/processor/mcpimpactprocessor/internal/metadatatest"
	"github.com/mcpdrift/mcpdrift/semconv"
)

func TestStaleCallMetricHasBoundedLabels(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.MetricLabelLimit = 2
	h := newHarness(t, cfg)
	h.sendLogs(snapshotLogs(searchSnapshot(t0.Add(-time.Hour))))
	var calls []call
	for i := range 4 {
		calls = append(calls, call{agent: fmt.Sprintf("agent-%d", i), server: srv, url: srvURL, tool: "search", session: "s", digest: "old", at: t0})
	}
	calls = append(calls,
		call{agent: "agent-0", server: srv, url: srvURL, tool: "search", session: "s", digest: "d1", at: t0}, // fresh
		call{server: srv, url: srvURL, tool: "fetch", session: "s", digest: "old", at: t0},                   // no agent, no service
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
		point("search", "agent-1", 1),
		point("search", "_other", 2),
		point("fetch", "_other", 1), // "_unknown" would be a third agent value
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

func TestBoundedLabel(t *testing.T) {
	tel := &telemetry{limit: 2}
	seen := map[string]struct{}{}
	require.Equal(t, "a", tel.bounded(seen, "a"))
	require.Equal(t, "b", tel.bounded(seen, "b"))
	require.Equal(t, otherLabel, tel.bounded(seen, "c"))
	require.Equal(t, "a", tel.bounded(seen, "a"), "values seen before the cap keep their label")
}
