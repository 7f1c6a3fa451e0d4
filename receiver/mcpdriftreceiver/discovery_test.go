package mcpdriftreceiver

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"

	"github.com/mcpdrift/mcpdrift/semconv"
)

// TestSingleTargetForm: what receiver_creator hands the factory, an
// endpoint from the observer merged into the rule's config.
func TestSingleTargetForm(t *testing.T) {
	for _, tc := range []struct {
		conf     map[string]any
		name     string
		endpoint string
		err      string
	}{
		{conf: map[string]any{"endpoint": "127.0.0.1:3001"}, name: "127.0.0.1:3001", endpoint: "http://127.0.0.1:3001/mcp"},
		{conf: map[string]any{"endpoint": "10.0.0.7:8080", "path": "v1/mcp"}, name: "10.0.0.7:8080", endpoint: "http://10.0.0.7:8080/v1/mcp"},
		{conf: map[string]any{"endpoint": "https://search.example.com/mcp", "name": "search"}, name: "search", endpoint: "https://search.example.com/mcp"},
		{conf: map[string]any{"endpoint": "https://search.example.com/mcp", "path": "/x"}, err: "path applies only"},
		{conf: map[string]any{"endpoint": "ftp://files.example.com"}, err: "want host:port or an http(s) URL"},
		{conf: map[string]any{"endpoint": "127.0.0.1:3001", "targets": []any{map[string]any{"name": "a", "command": []any{"a"}}}}, err: "exclusive"},
	} {
		cfg := createDefaultConfig().(*Config)
		err := confmap.NewFromStringMap(tc.conf).Unmarshal(cfg)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: error %v, want one saying %q", tc.conf, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tc.conf, err)
			continue
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("%v: %v", tc.conf, err)
		}
		if len(cfg.Targets) != 1 || cfg.Targets[0].Name != tc.name || cfg.Targets[0].Endpoint != tc.endpoint {
			t.Errorf("%v: targets %+v, want %s at %s", tc.conf, cfg.Targets, tc.name, tc.endpoint)
		}
	}
	// receiver_creator keeps the endpoint it discovered only when the
	// receiver's default configuration takes an endpoint key without an
	// "invalid keys" error.
	if err := confmap.NewFromStringMap(map[string]any{"endpoint": "127.0.0.1:1"}).Unmarshal(NewFactory().CreateDefaultConfig()); err != nil {
		t.Errorf("the default configuration does not take endpoint: %v", err)
	}
}

// TestDiscoveredBaselineOutlivesReceiverID: receiver_creator names its
// receivers after the observer's endpoint ID, which changes when the server
// restarts (a port's carries the pid). The baseline is stored under the
// target, so the receiver started for the returning server restores it and
// reports no drift; an unrelated endpoint stores apart.
func TestDiscoveredBaselineOutlivesReceiverID(t *testing.T) {
	dir := t.TempDir()
	a := snap(t, map[string]string{"search": "Search the web"})
	b := snap(t, map[string]string{"search": "Search the web", "fetch": "Fetch a page"})
	const name = "127.0.0.1:3001"
	p := newFakeProber()
	var owners []component.ID
	// pid 4242 stores the baseline; 4343 finds the server unchanged; 4444
	// finds it changed: one drift, from the baseline stored two receivers ago.
	for i, pid := range []string{"4242", "4343", "4444"} {
		served, wantDrifts := a, 0
		if i == 2 {
			served, wantDrifts = b, 1
		}
		p.set(name, served, nil)
		cfg := testConfig()
		cfg.Storage = &storageID
		cfg.Endpoint = name
		tc, err := discoveredTarget(cfg.Endpoint, "", "")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Targets = []TargetConfig{tc}
		set := receiverSettings()
		set.ID = component.MustNewIDWithName("mcpdrift", "mcp/(host_observer)127.0.0.1-3001-TCP-"+pid)
		owners = append(owners, storageOwner(set, cfg))

		host := newStorageHost(t, dir, nil)
		before := p.count(name)
		r, logs, _ := runReceiverWith(t, set, cfg, p, host)
		if wantDrifts > 0 {
			waitFor(t, "drift", func() bool { return len(eventsNamed(logs, semconv.EventDrift)) >= wantDrifts })
		}
		waitFor(t, "probes", func() bool { return p.count(name) >= before+6 })
		if err := r.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		_ = host.Extensions[storageID].Shutdown(context.Background())
		drifts := eventsNamed(logs, semconv.EventDrift)
		if len(drifts) != wantDrifts {
			t.Fatalf("receiver for pid %s: %d drifts, want %d", pid, len(drifts), wantDrifts)
		}
		if wantDrifts > 0 {
			if prev := attr(drifts[0], semconv.PreviousContract); prev != a.Digests.Contract {
				t.Errorf("drift from %s, want from the stored baseline %s", prev, a.Digests.Contract)
			}
			if got := attr(drifts[0], semconv.ServerName); got != name {
				t.Errorf("drift of %q, want %q", got, name)
			}
		}
	}
	if owners[0] != owners[1] || owners[1] != owners[2] || strings.Contains(owners[0].String(), "4242") {
		t.Errorf("storage owners %v: want one, named by the target", owners)
	}
	if got := storageOwner(receiverSettings(), testConfig("a")); got != receiverSettings().ID {
		t.Errorf("a receiver with a target list stores under %s, want its own ID", got)
	}
}
