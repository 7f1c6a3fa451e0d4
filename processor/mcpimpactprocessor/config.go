package mcpimpactprocessor

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
)

// Limits on configuration values: beyond them the processor would either
// misbehave (times are kept at one-second resolution) or hold an unreasonable
// amount of memory by mistake.
const (
	maxIndexEntriesLimit      = 50_000_000
	maxSessionsPerRecordLimit = 1000
	maxMetricCardinalityLimit = 10_000
)

// Config is the configuration of the mcpimpact processor.
type Config struct {
	// Window is how long a tool call counts towards impact after it was made.
	Window time.Duration `mapstructure:"window"`
	// RecentWindow is what "recent" means for the risk level: a breaking
	// change with calls made with the old digest within it is high risk.
	RecentWindow time.Duration `mapstructure:"recent_window"`
	// MaxIndexEntries bounds the index; the least recently called entries are
	// evicted first.
	MaxIndexEntries int `mapstructure:"max_index_entries"`
	// MaxSessionsPerRecord bounds the session id sample on each impact record.
	MaxSessionsPerRecord int `mapstructure:"max_sessions_per_record"`
	// MetricCardinalityLimit bounds the series (label combinations) of each
	// of the processor's own metrics; measurements of further combinations
	// are counted in one series marked otel.metric.overflow=true.
	MetricCardinalityLimit int `mapstructure:"metric_cardinality_limit"`
	// IndexServerSpans controls whether server-side tool-call spans (spans of
	// kind SERVER, or carrying client.address) are indexed. They never name
	// the calling agent; turn them off when the agents are instrumented too,
	// or every call is counted twice.
	IndexServerSpans bool `mapstructure:"index_server_spans"`
	// Storage is the ID of a storage extension that keeps the index and the
	// known contracts across restarts. Optional.
	Storage *component.ID `mapstructure:"storage"`
	// ControlPlane is the ID of an mcpdrift_api extension to register with:
	// it answers impact queries over HTTP from this processor's index.
	ControlPlane *component.ID `mapstructure:"control_plane"`
	// PersistInterval is how often the index is written to Storage in
	// addition to on shutdown; 0 writes only on shutdown.
	PersistInterval time.Duration `mapstructure:"persist_interval"`
	// PromptProbeInterval is the least time between two prompt probes of
	// one target, asked for (through ControlPlane) when a call carries a
	// tool digest no probe has shown; 0 asks for none.
	PromptProbeInterval time.Duration `mapstructure:"prompt_probe_interval"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var _ component.Config = (*Config)(nil)

func createDefaultConfig() component.Config {
	return &Config{
		Window:                 24 * time.Hour,
		RecentWindow:           time.Hour,
		MaxIndexEntries:        100_000,
		MaxSessionsPerRecord:   10,
		MetricCardinalityLimit: 1000,
		IndexServerSpans:       true,
		PersistInterval:        5 * time.Minute,
		PromptProbeInterval:    5 * time.Second,
	}
}

// Validate checks the configuration.
func (cfg *Config) Validate() error {
	var errs []error
	if cfg.Window < time.Second {
		errs = append(errs, fmt.Errorf("window must be at least 1s, got %s", cfg.Window))
	}
	if cfg.RecentWindow < time.Second {
		errs = append(errs, fmt.Errorf("recent_window must be at least 1s, got %s", cfg.RecentWindow))
	} else if cfg.RecentWindow > cfg.Window {
		errs = append(errs, fmt.Errorf("recent_window (%s) must not exceed window (%s)", cfg.RecentWindow, cfg.Window))
	}
	if cfg.MaxIndexEntries < 1 || cfg.MaxIndexEntries > maxIndexEntriesLimit {
		errs = append(errs, fmt.Errorf("max_index_entries must be between 1 and %d, got %d", maxIndexEntriesLimit, cfg.MaxIndexEntries))
	}
	if cfg.MaxSessionsPerRecord < 0 || cfg.MaxSessionsPerRecord > maxSessionsPerRecordLimit {
		errs = append(errs, fmt.Errorf("max_sessions_per_record must be between 0 and %d, got %d", maxSessionsPerRecordLimit, cfg.MaxSessionsPerRecord))
	}
	if cfg.MetricCardinalityLimit < 1 || cfg.MetricCardinalityLimit > maxMetricCardinalityLimit {
		errs = append(errs, fmt.Errorf("metric_cardinality_limit must be between 1 and %d, got %d", maxMetricCardinalityLimit, cfg.MetricCardinalityLimit))
	}
	if cfg.PersistInterval < 0 {
		errs = append(errs, fmt.Errorf("persist_interval must not be negative, got %s", cfg.PersistInterval))
	} else if cfg.PersistInterval > 0 && cfg.PersistInterval < time.Second {
		errs = append(errs, fmt.Errorf("persist_interval must be 0 or at least 1s, got %s", cfg.PersistInterval))
	}
	if cfg.PromptProbeInterval < 0 {
		errs = append(errs, fmt.Errorf("prompt_probe_interval must not be negative, got %s", cfg.PromptProbeInterval))
	} else if cfg.PromptProbeInterval > 0 && cfg.PromptProbeInterval < 100*time.Millisecond {
		errs = append(errs, fmt.Errorf("prompt_probe_interval must be 0 or at least 100ms, got %s", cfg.PromptProbeInterval))
	}
	return errors.Join(errs...)
}
