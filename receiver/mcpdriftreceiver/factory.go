package mcpdriftreceiver

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"

	"github.com/mcpdrift/mcpdrift/internal/sharedcomponent"
	"github.com/mcpdrift/mcpdrift/receiver/mcpdriftreceiver/internal/metadata"
)

// factory keeps one receiver per component ID, shared by the logs and the
// metrics pipeline that list it: each target is probed once per interval and
// both pipelines see the result of the same probe.
type factory struct {
	receivers *sharedcomponent.Map[component.ID, *driftReceiver]
}

// NewFactory returns the factory of the mcpdrift receiver.
func NewFactory() receiver.Factory {
	f := &factory{receivers: sharedcomponent.NewMap[component.ID, *driftReceiver]()}
	return receiver.NewFactory(
		metadata.Type,
		createDefaultConfig,
		receiver.WithLogs(f.createLogs, metadata.LogsStability),
		receiver.WithMetrics(f.createMetrics, metadata.MetricsStability),
	)
}

func (f *factory) shared(set receiver.Settings, cfg component.Config) (*sharedcomponent.Component[*driftReceiver], error) {
	rCfg, ok := cfg.(*Config)
	if !ok {
		return nil, errors.New("mcpdrift: unexpected config type")
	}
	return f.receivers.LoadOrStore(set.ID, func() (*driftReceiver, error) {
		return newDriftReceiver(set, rCfg, newProber(rCfg))
	})
}

func (f *factory) createLogs(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Logs) (receiver.Logs, error) {
	c, err := f.shared(set, cfg)
	if err != nil {
		return nil, err
	}
	c.Unwrap().setLogs(next)
	return c, nil
}

func (f *factory) createMetrics(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
	c, err := f.shared(set, cfg)
	if err != nil {
		return nil, err
	}
	c.Unwrap().setMetrics(next)
	return c, nil
}
