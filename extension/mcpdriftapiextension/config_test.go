package mcpdriftapiextension

import (
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
)

func TestConfig(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	if cfg.NetAddr.Endpoint != "localhost:13180" {
		t.Errorf("default endpoint %q", cfg.NetAddr.Endpoint)
	}
	err := confmap.NewFromStringMap(map[string]any{
		"endpoint": "0.0.0.0:9999",
		"auth":     map[string]any{"authenticator": "basicauth/api"},
		"cors":     map[string]any{"allowed_origins": []any{"https://ops.example.com"}},
	}).Unmarshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := confmap.Validate(cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.NetAddr.Endpoint != "0.0.0.0:9999" || cfg.Auth.Get().Config.AuthenticatorID != component.MustNewIDWithName("basicauth", "api") ||
		cfg.CORS.Get().AllowedOrigins[0] != "https://ops.example.com" {
		t.Errorf("config %+v", cfg)
	}
	cfg.NetAddr.Endpoint = ""
	if err := confmap.Validate(cfg); err == nil {
		t.Error("an empty endpoint is valid")
	}
}
