package mcpimpactprocessor

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/mcpdrift/mcpdrift/internal/sharedcomponent"
	"github.com/mcpdrift/mcpdrift/processor/mcpimpactprocessor/internal/metadata"
)

// Spans get staleness attributes and drift records get impact attributes.
var capabilities = consumer.Capabilities{MutatesData: true}

type factory struct {
	now func() time.Time
	// One processor per component ID, shared by its traces and logs
	// pipelines; created by the first create call, not here (the
	// distribution's generated code calls NewFactory more than once).
	instances *sharedcomponent.Map[component.ID, *impactProcessor]
}

// NewFactory returns the factory of the mcpimpact processor.
func NewFactory() processor.Factory { return newFactory(time.Now).processorFactory() }

// newFactory takes the clock the processors use (tests inject one).
func newFactory(now func() time.Time) *factory {
	return &factory{now: now, instances: sharedcomponent.NewMap[component.ID, *impactProcessor]()}
}

func (f *factory) processorFactory() processor.Factory {
	return processor.NewFactory(metadata.Type, createDefaultConfig,
		processor.WithTraces(f.createTraces, metadata.TracesStability),
		processor.WithLogs(f.createLogs, metadata.LogsStability))
}

func (f *factory) instance(set processor.Settings, cfg component.Config) (*sharedcomponent.Component[*impactProcessor], error) {
	return f.instances.LoadOrStore(set.ID, func() (*impactProcessor, error) {
		return newImpactProcessor(set, cfg.(*Config), f.now)
	})
}

func (f *factory) createTraces(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	shared, err := f.instance(set, cfg)
	if err != nil {
		return nil, err
	}
	return processorhelper.NewTraces(ctx, set, cfg, next, shared.Unwrap().processTraces,
		processorhelper.WithCapabilities(capabilities),
		processorhelper.WithStart(shared.Start),
		processorhelper.WithShutdown(shared.Shutdown))
}

func (f *factory) createLogs(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	shared, err := f.instance(set, cfg)
	if err != nil {
		return nil, err
	}
	return processorhelper.NewLogs(ctx, set, cfg, next, shared.Unwrap().processLogs,
		processorhelper.WithCapabilities(capabilities),
		processorhelper.WithStart(shared.Start),
		processorhelper.WithShutdown(shared.Shutdown))
}
