package mcpdriftapiextension

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/internal/metadata"
)

// NewFactory returns the factory of the mcpdrift_api extension.
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig, create, metadata.ExtensionStability)
}

func create(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	return newAPIExtension(set, cfg.(*Config)), nil
}
