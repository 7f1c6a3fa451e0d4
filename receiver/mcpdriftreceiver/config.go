package mcpdriftreceiver

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/confmap"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/internal/mcpwire/serverid"
	"github.com/mcpdrift/mcpdrift/probe"
	"github.com/mcpdrift/mcpdrift/receiver/mcpdriftreceiver/internal/metadata"
)

// Baseline modes.
const (
	BaselineAdvance = "advance" // a confirmed new contract becomes the baseline
	BaselinePinned  = "pinned"  // the baseline stays; drift repeats as an open condition
)

// Transports a target can name; stdio is implied by command.
const (
	TransportAuto           = "auto"
	TransportStreamableHTTP = contract.TransportStreamableHTTP
	TransportSSE            = contract.TransportSSE
)

// Config is the mcpdrift receiver's configuration.
type Config struct {
	// CollectionInterval is how often each target is probed. Each target's
	// schedule is offset by a random jitter within one interval, so a fleet
	// of targets does not probe in lockstep.
	CollectionInterval time.Duration `mapstructure:"collection_interval"`
	// InitialDelay postpones the first probe of every target after start.
	InitialDelay time.Duration `mapstructure:"initial_delay"`
	// Timeout bounds one probe of one target, end to end.
	Timeout time.Duration `mapstructure:"timeout"`
	// Settle is how long a probe waits for list_changed notifications after
	// connecting and re-lists until two listings agree; 0 lists once. It is
	// probe.Options.Settle (docs/probe.md#settling).
	Settle time.Duration `mapstructure:"settle"`
	// Storage is the ID of a storage extension (e.g. file_storage) that keeps
	// baselines across restarts. Absent: in memory only, with a warning.
	Storage *component.ID `mapstructure:"storage"`
	// ControlPlane is the ID of an mcpdrift_api extension to register with:
	// it serves server status, drift history and accept over HTTP.
	ControlPlane *component.ID `mapstructure:"control_plane"`
	// DriftHistory bounds the drifts kept per target.
	DriftHistory HistoryConfig `mapstructure:"drift_history"`
	// MaxConcurrentProbes bounds probes in flight across all targets.
	MaxConcurrentProbes int `mapstructure:"max_concurrent_probes"`
	// ConfirmAfter is the number of consecutive observations of a new
	// contract before it counts as drift.
	ConfirmAfter int `mapstructure:"confirm_after"`
	// ConfirmSamples is how many extra probes an endpoint target gets, at
	// once, before a new contract is confirmed after ConfirmAfter probes: a
	// load-balanced fleet in the middle of a rolling deploy shows its other
	// contract among them, and is then a mixed fleet, not drift. 0 disables.
	ConfirmSamples int `mapstructure:"confirm_samples"`
	// Baseline is "advance" (default) or "pinned".
	Baseline string `mapstructure:"baseline"`
	// Volatile configures detection of fields that change on every probe.
	Volatile VolatileConfig `mapstructure:"volatile"`
	// Policy is the classification policy, the same shape `mcpdrift diff
	// --config` reads. A bare string names a base policy (policy: strict).
	Policy contract.PolicyConfig `mapstructure:"policy"`
	// Limits bound what a server may send (document size, depth, ...).
	Limits contract.Limits `mapstructure:"limits"`
	// ClientCapabilities are declared to every target that sets none;
	// empty: what a typical agent declares (roots, sampling, elicitation).
	ClientCapabilities map[string]any `mapstructure:"client_capabilities"`
	// Targets are the MCP servers to probe.
	Targets []TargetConfig `mapstructure:"targets"`
	// Endpoint is the single-target form, which receiver_creator fills
	// with what an observer discovers ("host:port", or a URL): one target,
	// named by its address, whose baseline is stored under that name rather
	// than under the receiver's ID (which carries the observer's endpoint
	// ID, a process id among it). Exclusive with targets.
	Endpoint string `mapstructure:"endpoint"`
	// Path is the MCP path appended to an Endpoint given as host:port
	// (default /mcp).
	Path string `mapstructure:"path"`
	// Name names the single target (default: the endpoint's host:port).
	Name string `mapstructure:"name"`

	metadata.MetricsBuilderConfig `mapstructure:",squash"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// HistoryConfig bounds each target's drift history, in memory and in the
// storage extension (docs/api.md, "Drift history").
type HistoryConfig struct {
	// MaxDrifts is how many drifts are kept per target, newest first.
	MaxDrifts int `mapstructure:"max_drifts"`
	// MaxBytes bounds a target's history (encoded JSON); the oldest drifts
	// go first.
	MaxBytes int `mapstructure:"max_bytes"`
	// MaxDriftBytes bounds one drift: whole definitions, then before/after
	// values, are left out (and the drift marked truncated) to fit.
	MaxDriftBytes int `mapstructure:"max_drift_bytes"`
}

// History bounds: defaults, and limits on what may be configured.
const (
	defaultHistoryDrifts     = 100
	defaultHistoryBytes      = 1 << 20
	defaultHistoryDriftBytes = 128 << 10
	maxHistoryDrifts         = 1000
	minHistoryDriftBytes     = 4 << 10
	maxHistoryBytes          = 64 << 20
)

// VolatileConfig configures volatile-field detection.
type VolatileConfig struct {
	// Ignore makes detected volatile fields ignored from then on (default true).
	Ignore bool `mapstructure:"ignore"`
	// After is how many consecutive probes must each change a field before
	// it counts as volatile.
	After int `mapstructure:"after"`
}

// TargetConfig is one MCP server to probe: an HTTP endpoint (with the
// collector's HTTP client settings: headers, TLS, auth extension, timeout,
// proxy) or a stdio command.
type TargetConfig struct {
	// Name is the logical server name (mcpdrift.server.name); unique.
	Name string `mapstructure:"name"`
	// ClientConfig holds endpoint, headers, tls, auth, timeout, proxy_url...
	confighttp.ClientConfig `mapstructure:",squash"`
	// Transport is auto (default), streamable-http or sse for endpoints.
	Transport string `mapstructure:"transport"`
	// Command runs a stdio server: program and arguments.
	Command []string `mapstructure:"command"`
	// Env is added to the stdio server's environment (values are opaque:
	// never logged).
	Env map[string]configopaque.String `mapstructure:"env"`
	// WorkingDir is the stdio server's working directory.
	WorkingDir string `mapstructure:"working_dir"`
	// ClientCapabilities override the receiver-wide declaration.
	ClientCapabilities map[string]any `mapstructure:"client_capabilities"`
	// CollectionInterval overrides the receiver-wide interval.
	CollectionInterval time.Duration `mapstructure:"collection_interval"`
}

func createDefaultConfig() component.Config {
	return &Config{
		CollectionInterval:   60 * time.Second,
		Timeout:              30 * time.Second,
		Settle:               500 * time.Millisecond,
		MaxConcurrentProbes:  32,
		ConfirmAfter:         2,
		ConfirmSamples:       DefaultConfirmSamples,
		Baseline:             BaselineAdvance,
		Volatile:             VolatileConfig{Ignore: true, After: 3},
		DriftHistory:         HistoryConfig{MaxDrifts: defaultHistoryDrifts, MaxBytes: defaultHistoryBytes, MaxDriftBytes: defaultHistoryDriftBytes},
		Limits:               contract.DefaultLimits(),
		Targets:              []TargetConfig{},
		MetricsBuilderConfig: metadata.NewDefaultMetricsBuilderConfig(),
	}
}

// Unmarshal accepts `policy: NAME` as shorthand for `policy: {base: NAME}`,
// and starts every target from the collector's HTTP client defaults
// (keep-alive on), as a single-endpoint component would: mapstructure would
// otherwise build list elements from zero values, and a zero confighttp
// client disables keep-alive, opening a connection per request.
func (cfg *Config) Unmarshal(conf *confmap.Conf) error {
	raw := conf.ToStringMap()
	if name, ok := raw["policy"].(string); ok {
		raw["policy"] = map[string]any{"base": name}
	}
	targets, hasTargets := raw["targets"]
	delete(raw, "targets")
	type plain Config // without this Unmarshal method, so decoding does not recurse
	if err := confmap.NewFromStringMap(raw).Unmarshal((*plain)(cfg)); err != nil {
		return err
	}
	if cfg.Endpoint != "" {
		if hasTargets && targets != nil {
			return errors.New("endpoint (the single-target form, as receiver_creator sets it) and targets are exclusive")
		}
		tc, err := discoveredTarget(cfg.Endpoint, cfg.Path, cfg.Name)
		if err != nil {
			return err
		}
		cfg.Targets = []TargetConfig{tc}
		return nil
	}
	if !hasTargets || targets == nil {
		return nil
	}
	list, ok := targets.([]any)
	if !ok {
		return errors.New("targets must be a list")
	}
	cfg.Targets = make([]TargetConfig, 0, len(list))
	for i, t := range list {
		m, ok := t.(map[string]any)
		if !ok {
			return fmt.Errorf("targets[%d] must be a map", i)
		}
		tc := NewTargetConfig("")
		if err := confmap.NewFromStringMap(m).Unmarshal(&tc); err != nil {
			return fmt.Errorf("targets[%d]: %w", i, err)
		}
		cfg.Targets = append(cfg.Targets, tc)
	}
	return nil
}

// discoveredTarget is the one target of the single-target form: an endpoint
// without a scheme ("127.0.0.1:3001", as observers report ports) is plain
// HTTP with path (default /mcp) appended.
func discoveredTarget(endpoint, path, name string) (TargetConfig, error) {
	raw := endpoint
	if !strings.Contains(raw, "://") {
		if path == "" {
			path = "/mcp"
		}
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		raw = "http://" + raw + path
	} else if path != "" {
		return TargetConfig{}, errors.New("path applies only to an endpoint given as host:port")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return TargetConfig{}, fmt.Errorf("endpoint %q: want host:port or an http(s) URL", endpoint)
	}
	if name == "" {
		name = u.Host
	}
	tc := NewTargetConfig(name)
	tc.Endpoint = u.String()
	return tc, nil
}

// NewTargetConfig returns a target with the collector's HTTP client defaults.
func NewTargetConfig(name string) TargetConfig {
	return TargetConfig{Name: name, ClientConfig: confighttp.NewDefaultClientConfig()}
}

// Validate checks the configuration.
func (cfg *Config) Validate() error {
	var errs []error
	if cfg.CollectionInterval <= 0 {
		errs = append(errs, errors.New("collection_interval must be positive"))
	}
	if cfg.Timeout <= 0 {
		errs = append(errs, errors.New("timeout must be positive"))
	}
	if cfg.Settle < 0 {
		errs = append(errs, errors.New("settle must not be negative (0s lists once)"))
	}
	if cfg.InitialDelay < 0 {
		errs = append(errs, errors.New("initial_delay must not be negative"))
	}
	if cfg.MaxConcurrentProbes < 1 {
		errs = append(errs, errors.New("max_concurrent_probes must be at least 1"))
	}
	if cfg.ConfirmAfter < 1 {
		errs = append(errs, errors.New("confirm_after must be at least 1"))
	}
	if cfg.ConfirmSamples < 0 {
		errs = append(errs, errors.New("confirm_samples must not be negative"))
	}
	if cfg.Baseline != BaselineAdvance && cfg.Baseline != BaselinePinned {
		errs = append(errs, fmt.Errorf("baseline must be %q or %q, not %q", BaselineAdvance, BaselinePinned, cfg.Baseline))
	}
	if cfg.Volatile.After < 2 {
		errs = append(errs, errors.New("volatile.after must be at least 2"))
	}
	if err := cfg.DriftHistory.validate(); err != nil {
		errs = append(errs, fmt.Errorf("drift_history: %w", err))
	}
	// policy, limits and each target validate themselves: the Collector
	// walks nested Validate methods (confmap.Validate), so calling them
	// here would report their errors twice. What is checked here is what
	// only the receiver knows.
	if err := probe.ValidateMaxDepth(cfg.Limits.MaxDepth); err != nil {
		errs = append(errs, fmt.Errorf("limits: %w", err))
	}
	if len(cfg.Targets) == 0 {
		errs = append(errs, errors.New("targets: at least one target (an endpoint or a command) is required"))
	}
	seen := map[string]bool{}
	for i, t := range cfg.Targets {
		if seen[t.Name] {
			errs = append(errs, fmt.Errorf("targets: duplicate name %q (targets::%d)", t.Name, i))
		}
		seen[t.Name] = true
	}
	return errors.Join(errs...)
}

func (h HistoryConfig) validate() error {
	switch {
	case h.MaxDrifts < 0 || h.MaxDrifts > maxHistoryDrifts:
		return fmt.Errorf("max_drifts must be from 0 (no history) to %d, not %d", maxHistoryDrifts, h.MaxDrifts)
	case h.MaxDriftBytes < minHistoryDriftBytes:
		return fmt.Errorf("max_drift_bytes must be at least %d, not %d", minHistoryDriftBytes, h.MaxDriftBytes)
	case h.MaxBytes < h.MaxDriftBytes || h.MaxBytes > maxHistoryBytes:
		return fmt.Errorf("max_bytes must be from max_drift_bytes (%d) to %d, not %d", h.MaxDriftBytes, maxHistoryBytes, h.MaxBytes)
	}
	return nil
}

// Validate checks one target. The HTTP client settings it embeds
// (confighttp.ClientConfig) are validated by the Collector on their own;
// declaring Validate here also keeps the Collector from calling theirs a
// second time as a method promoted to the target.
func (t *TargetConfig) Validate() error {
	if err := t.validate(); err != nil {
		if t.Name != "" {
			return fmt.Errorf("target %q: %w", t.Name, err)
		}
		return err
	}
	return nil
}

func (t *TargetConfig) validate() error {
	switch {
	case t.Name == "":
		return errors.New("name is required")
	case t.Endpoint == "" && len(t.Command) == 0:
		return errors.New("one of endpoint or command is required")
	case t.Endpoint != "" && len(t.Command) > 0:
		return errors.New("endpoint and command are exclusive")
	case t.CollectionInterval < 0:
		return errors.New("collection_interval must not be negative")
	}
	if len(t.Command) > 0 {
		if t.Command[0] == "" {
			return errors.New("command[0] must name a program")
		}
		if t.Transport != "" && t.Transport != contract.TransportStdio {
			return fmt.Errorf("transport %q does not apply to a command", t.Transport)
		}
		return nil
	}
	for name, value := range t.Headers.Iter {
		if err := probe.ValidateHeader(name, string(value)); err != nil {
			return err
		}
	}
	u, err := url.Parse(t.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("endpoint must be an http(s) URL with a host, not %q", serverid.Display(t.Endpoint))
	}
	switch t.Transport {
	case "", TransportAuto, TransportStreamableHTTP, TransportSSE:
	default:
		return fmt.Errorf("transport must be auto, streamable-http or sse, not %q", t.Transport)
	}
	return nil
}
