package mcpdriftapiextension

import (
	"errors"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"

	"github.com/mcpdrift/mcpdrift/extension/mcpdriftapiextension/apiwire"
)

// Config is the configuration of the mcpdrift_api extension.
type Config struct {
	// ServerConfig holds endpoint, tls, cors, auth, ... The auth extension
	// guards every route under /api/; the dashboard's static files hold no
	// data and are served to anyone who can reach the endpoint, so a
	// browser can load the page before it has a token to send.
	confighttp.ServerConfig `mapstructure:",squash"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var _ component.Config = (*Config)(nil)

func createDefaultConfig() component.Config {
	sc := confighttp.NewDefaultServerConfig()
	sc.NetAddr.Endpoint = apiwire.DefaultEndpoint
	return &Config{ServerConfig: sc}
}

// Validate checks the configuration.
func (cfg *Config) Validate() error {
	if cfg.NetAddr.Endpoint == "" {
		return errors.New("endpoint is required (default " + apiwire.DefaultEndpoint + ")")
	}
	return nil
}
