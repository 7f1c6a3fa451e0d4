package mcpdriftreceiver

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/mcpdrift/mcpdrift/contract"
	"github.com/mcpdrift/mcpdrift/probe"
)

func loadConfig(t *testing.T, name string) *Config {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sub, err := cm.Sub(component.MustNewIDWithName("mcpdrift", name).String())
	if name == "" {
		sub, err = cm.Sub("mcpdrift")
	}
	if err != nil {
		t.Fatal(err)
	}
	cfg := createDefaultConfig().(*Config)
	if err := sub.Unmarshal(cfg); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return cfg
}

func TestConfigAsUsersWriteIt(t *testing.T) {
	cfg := loadConfig(t, "full")
	if err := confmap.Validate(cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.CollectionInterval != time.Minute || cfg.Storage == nil || cfg.Storage.String() != "file_storage" || cfg.ConfirmAfter != 2 || cfg.ConfirmSamples != 4 {
		t.Errorf("top level: %+v", cfg)
	}
	if cfg.Policy.Base != "default" {
		t.Errorf("policy shorthand: %+v", cfg.Policy)
	}
	if len(cfg.Targets) != 2 {
		t.Fatalf("targets: %+v", cfg.Targets)
	}
	search, files := cfg.Targets[0], cfg.Targets[1]
	if search.Endpoint != "https://search.example.com/mcp" || search.Timeout != 10*time.Second {
		t.Errorf("search: %+v", search)
	}
	if v, ok := search.Headers.Get("Authorization"); !ok || string(v) != "Bearer s3cr3t" {
		t.Errorf("headers: %v", search.Headers)
	}
	if !search.Keepalive.HasValue() || !files.Keepalive.HasValue() {
		t.Error("targets must start from the HTTP client defaults (keep-alive on)")
	}
	if n := connectionsForTwoRequests(t, search); n != 1 {
		t.Errorf("the target's HTTP client opened %d connections for two requests: keep-alive is off", n)
	}
	if files.Command[0] != "npx" || string(files.Env["NODE_ENV"]) != "production" {
		t.Errorf("stdio target: %+v", files)
	}
	if got := string(clientCapabilitiesJSON(cfg.ClientCapabilities)); got != probe.DefaultClientCapabilities {
		t.Errorf("absent client_capabilities declare %s, want the default", got)
	}
	pinned := loadConfig(t, "pinned")
	if got := string(clientCapabilitiesJSON(pinned.ClientCapabilities)); got != "{}" {
		t.Errorf("client_capabilities: {} declares %s, want none", got)
	}
	if err := confmap.Validate(pinned); err != nil || pinned.Baseline != BaselinePinned || pinned.Volatile.Ignore || pinned.Volatile.After != 5 {
		t.Errorf("pinned: %+v %v", pinned, err)
	}
}

// TestConfigControlPlane: control_plane names an extension; a history of
// no drifts is allowed, and unset bounds keep their defaults.
func TestConfigControlPlane(t *testing.T) {
	cfg := loadConfig(t, "control_plane")
	if err := confmap.Validate(cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.ControlPlane == nil || cfg.ControlPlane.String() != "mcpdrift_api/ops" {
		t.Errorf("control_plane: %v", cfg.ControlPlane)
	}
	if cfg.DriftHistory != (HistoryConfig{MaxDrifts: 0, MaxBytes: defaultHistoryBytes, MaxDriftBytes: defaultHistoryDriftBytes}) {
		t.Errorf("drift_history: %+v", cfg.DriftHistory)
	}
}

func TestConfigPolicyBlock(t *testing.T) {
	cfg := loadConfig(t, "policy_block")
	if err := confmap.Validate(cfg); err != nil {
		t.Fatal(err)
	}
	p := cfg.Policy
	if p.Base != "strict" || p.Severities["tool.description.changed"] != contract.Info || p.Severities["input.description.*"] != contract.None {
		t.Errorf("severities: %+v", p)
	}
	if len(p.Ignore) != 1 || p.Ignore[0].Path != "/inputSchema/**/description" || p.Ignore[0].Name != "search*" {
		t.Errorf("ignore: %+v", p.Ignore)
	}
}

func TestConfigRejects(t *testing.T) {
	for name, want := range map[string]string{
		"bad_transport": "transport must be",
		"both":          "exclusive",
		"neither":       "one of endpoint or command",
		"dup":           "duplicate name",
		"bad_numbers":   "confirm_after",
		"bad_samples":   "confirm_samples must not be negative",
		"policy_bad":    "policy",
		"history_bad":   "drift_history: max_drifts must be from 0 (no history) to 1000, not 1001",
		"history_bytes": "max_bytes must be from max_drift_bytes (8192)",
		// A receiver with nothing to probe is a mistake, as in contrib receivers.
		"":           "at least one target",
		"no_targets": "at least one target",
		// net/http refuses the value, so every probe would fail as unreachable.
		"header_line_break": `targets::0: target "search": header Authorization: the value holds CR, LF`,
	} {
		err := confmap.Validate(loadConfig(t, name))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "0123456789") {
			t.Errorf("%s: the error quotes a header value: %v", name, err)
		}
	}
}

// The Collector walks nested Validate methods itself (confmap.Validate):
// each error is reported once, under the keys a user wrote.
func TestConfigErrorsOnceNamingKeys(t *testing.T) {
	err := confmap.Validate(loadConfig(t, "errors_once"))
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{
		`policy: unknown base policy "paranoid"`,
		"limits: max_depth must be at most 511",
		"limits: max_string_bytes must not be negative",
		"targets::0::clientconfig: unsupported parameters",
		`targets::1: target "files": transport "sse" does not apply to a command`,
	} {
		if n := strings.Count(msg, want); n != 1 {
			t.Errorf("%q appears %d times in:\n%s", want, n, msg)
		}
	}
	if strings.Contains(msg, "MaxDepth") || strings.Contains(msg, "MaxStringBytes") {
		t.Errorf("an error prints a Go value instead of naming keys:\n%s", msg)
	}
}

// The server URL the receiver emits is the server identity the interceptor
// and the processor use (serverid): no credentials, query or fragment.
func TestTargetServerURL(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	for _, c := range []struct {
		tc   TargetConfig
		want string
	}{
		{TargetConfig{ClientConfig: confighttp.ClientConfig{Endpoint: "https://user:pass@h.example:8443/mcp?token=abc#frag"}}, "https://h.example:8443/mcp"},
		{TargetConfig{ClientConfig: confighttp.ClientConfig{Endpoint: "https://h.example/users/@me/mcp"}}, "https://h.example/users/@me/mcp"},
		{TargetConfig{Command: []string{"npx", "-y", "server"}}, "stdio:npx -y server"},
	} {
		if got := newTarget(c.tc, cfg, nil).url; got != c.want {
			t.Errorf("%+v: url %q, want %q", c.tc, got, c.want)
		}
	}
}

// connectionsForTwoRequests sends two requests with the target's HTTP client
// and counts the connections the server accepted.
func connectionsForTwoRequests(t *testing.T, tc TargetConfig) int64 {
	var accepted atomic.Int64
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			accepted.Add(1)
		}
	}
	ts.Start()
	defer ts.Close()
	client, err := tc.ToClient(context.Background(), nil, componenttest.NewNopTelemetrySettings())
	if err != nil {
		t.Fatal(err)
	}
	defer client.CloseIdleConnections() // goleak: no keep-alive outlives the test
	for range 2 {
		resp, err := client.Get(ts.URL)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return accepted.Load()
}
