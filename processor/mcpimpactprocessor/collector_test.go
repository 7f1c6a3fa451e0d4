package mcpimpactprocessor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/featuregate"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/receiver"
	svctelemetry "go.opentelemetry.io/collector/service/telemetry"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/mcpdrift/mcpdrift/processor/mcpimpactprocessor/internal/metadata"
	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestInACollector runs the processor in a real Collector service, in a
// traces and a logs pipeline, configured from YAML as a user would: one
// shared instance, created once, started and shut down once, its state
// shared by both pipelines, its metrics free of per-pipeline attributes.
func TestInACollector(t *testing.T) {
	// With this gate (alpha at v0.165) the Collector puts the component and
	// pipeline into the scope of every component's metrics.
	const gate = "telemetry.newPipelineTelemetry"
	require.NoError(t, featuregate.GlobalRegistry().Set(gate, true))
	t.Cleanup(func() { require.NoError(t, featuregate.GlobalRegistry().Set(gate, false)) })

	src := &testSource{}
	spans, events := new(consumertest.TracesSink), new(consumertest.LogsSink)
	reader := sdkmetric.NewManualReader()
	clock := newClock()
	impact := newFactory(clock.Now)
	storageDir := t.TempDir()

	factories := func() (otelcol.Factories, error) {
		return otelcol.Factories{
			Receivers:  map[component.Type]receiver.Factory{testSourceType: src.factory()},
			Processors: map[component.Type]processor.Factory{metadata.Type: impact.processorFactory()},
			Exporters:  map[component.Type]exporter.Factory{testSinkType: sinkFactory(spans, events)},
			Extensions: map[component.Type]extension.Factory{component.MustNewType("file_storage"): filestorage.NewFactory()},
			Telemetry: svctelemetry.NewFactory(func() component.Config { return &struct{}{} },
				svctelemetry.WithCreateMeterProvider(func(context.Context, svctelemetry.MeterSettings, component.Config) (svctelemetry.MeterProvider, error) {
					return sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), nil
				})),
		}, nil
	}
	config := fmt.Sprintf(`
extensions:
  file_storage:
    directory: %s
receivers:
  testsource:
processors:
  mcpimpact:
    window: 24h
    max_index_entries: 1000
    storage: file_storage
exporters:
  testsink:
service:
  extensions: [file_storage]
  pipelines:
    traces:
      receivers: [testsource]
      processors: [mcpimpact]
      exporters: [testsink]
    logs:
      receivers: [testsource]
      processors: [mcpimpact]
      exporters: [testsink]
`, storageDir)
	col, err := otelcol.NewCollector(otelcol.CollectorSettings{
		BuildInfo:               component.NewDefaultBuildInfo(),
		Factories:               factories,
		DisableGracefulShutdown: true,
		SkipSettingGRPCLogger:   true,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{ResolverSettings: confmap.ResolverSettings{
			URIs:              []string{"yaml:" + config},
			ProviderFactories: []confmap.ProviderFactory{yamlprovider.NewFactory()},
		}},
	})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- col.Run(context.Background()) }()
	require.Eventually(t, func() bool { return col.GetState() == otelcol.StateRunning }, 30*time.Second, 10*time.Millisecond)
	assert.Equal(t, 1, impact.instances.Len(), "one instance for both pipelines")

	ctx := context.Background()
	require.NoError(t, src.logs.ConsumeLogs(ctx, snapshotLogs(supersededSnapshot(t0.Add(-2*time.Hour), map[string]string{"search": "d0"}))))
	require.NoError(t, src.logs.ConsumeLogs(ctx, snapshotLogs(searchSnapshot(t0.Add(-time.Hour)))))
	require.NoError(t, src.traces.ConsumeTraces(ctx, callsOf(
		call{agent: "planner", server: srv, url: srvURL, tool: "search", session: "s1", digest: "d0", at: t0},
	)))
	// The logs pipeline's snapshot judged the traces pipeline's span.
	require.Len(t, spans.AllTraces(), 1)
	cur, stale, judged := spanVerdict(onlySpan(t, spans.AllTraces()[0]))
	assert.True(t, judged)
	assert.Equal(t, "d1", cur)
	assert.True(t, stale)

	require.NoError(t, src.logs.ConsumeLogs(ctx, driftLogs(searchDrift(t0))))
	last := events.AllLogs()[len(events.AllLogs())-1]
	require.Equal(t, 3, last.LogRecordCount(), "the drift and its two impact records")
	im := readImpact(t, last.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(1))
	assert.Equal(t, "planner", im.agent)
	assert.Equal(t, semconv.ImpactRiskHigh, im.risk, "breaking; the call was stale")
	assert.Equal(t, int64(1), im.stale)

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(ctx, &rm))
	found := false
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != metadata.ScopeName {
			continue
		}
		found = true
		id, _ := sm.Scope.Attributes.Value("otelcol.component.id")
		assert.Equal(t, "mcpimpact", id.AsString())
		for _, k := range pipelineAttributes {
			_, ok := sm.Scope.Attributes.Value(attribute.Key(k))
			assert.False(t, ok, "%s describes one pipeline; the instance serves two", k)
		}
	}
	assert.True(t, found, "the processor's metrics are recorded")

	col.Shutdown()
	require.NoError(t, <-done)
	assert.Zero(t, impact.instances.Len(), "shut down once, and forgotten")
}

var (
	testSourceType = component.MustNewType("testsource")
	testSinkType   = component.MustNewType("testsink")
)

// testSource is a receiver in both pipelines that hands the test the
// pipelines' first consumers.
type testSource struct {
	traces consumer.Traces
	logs   consumer.Logs
}

type nopComponent struct {
	component.StartFunc
	component.ShutdownFunc
}

func (s *testSource) factory() receiver.Factory {
	return receiver.NewFactory(testSourceType, func() component.Config { return &struct{}{} },
		receiver.WithTraces(func(_ context.Context, _ receiver.Settings, _ component.Config, next consumer.Traces) (receiver.Traces, error) {
			s.traces = next
			return nopComponent{}, nil
		}, component.StabilityLevelDevelopment),
		receiver.WithLogs(func(_ context.Context, _ receiver.Settings, _ component.Config, next consumer.Logs) (receiver.Logs, error) {
			s.logs = next
			return nopComponent{}, nil
		}, component.StabilityLevelDevelopment))
}

type spanSink struct {
	nopComponent
	*consumertest.TracesSink
}

type eventSink struct {
	nopComponent
	*consumertest.LogsSink
}

func sinkFactory(spans *consumertest.TracesSink, events *consumertest.LogsSink) exporter.Factory {
	return exporter.NewFactory(testSinkType, func() component.Config { return &struct{}{} },
		exporter.WithTraces(func(context.Context, exporter.Settings, component.Config) (exporter.Traces, error) {
			return spanSink{TracesSink: spans}, nil
		}, component.StabilityLevelDevelopment),
		exporter.WithLogs(func(context.Context, exporter.Settings, component.Config) (exporter.Logs, error) {
			return eventSink{LogsSink: events}, nil
		}, component.StabilityLevelDevelopment))
}
